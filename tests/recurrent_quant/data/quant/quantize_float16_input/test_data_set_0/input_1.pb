
BsJf*