
By0Jd‚¬∞E˛ª\AQ8}@IƒŸ¬m√9D>¡EF…ÃEøCƒV∆ÖF3FàDA√’…B\E∆›=I>Üº·C≠Co<‘E¿]::¬Ä<K¬õ6®CÏD•H4¨;?+FG<ÇD#ƒE˛∫TB