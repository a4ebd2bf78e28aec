Bx_scaleJ'
?