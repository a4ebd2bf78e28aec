Bb_scaleJ
×#<