(NNP Rex) (VBD ran)

