print("offlinefs")
