BbJQ·Þ¿iS'¿%A
¿