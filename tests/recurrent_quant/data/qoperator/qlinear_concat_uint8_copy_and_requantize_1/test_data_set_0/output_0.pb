ByJPLoP]KT]fslTZlMFoÒE¢Ï¡ú²µ¥ÆÆ
g)VJJOQJaLZNsMcwWqIIfT‰T
f;1ýMKåÔ—x¼dbÿ|²NJURU