// OfflineHTTP
