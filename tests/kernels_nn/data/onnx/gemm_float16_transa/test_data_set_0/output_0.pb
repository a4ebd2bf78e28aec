
By0Jt¼2G±9B$¼x?