// OfflineStore
