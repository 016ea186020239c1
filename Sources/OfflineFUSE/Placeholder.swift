// OfflineFUSE
