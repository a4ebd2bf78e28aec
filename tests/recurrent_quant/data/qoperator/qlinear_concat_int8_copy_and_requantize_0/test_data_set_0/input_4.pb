Bz0J
