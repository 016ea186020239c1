// OfflineMount
