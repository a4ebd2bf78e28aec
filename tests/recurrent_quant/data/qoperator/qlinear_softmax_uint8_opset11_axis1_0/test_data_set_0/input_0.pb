
BXJ`øt”–Oe AÎRÏ[<'ˆs˜IWVL×>\–_