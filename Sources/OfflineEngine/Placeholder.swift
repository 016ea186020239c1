// OfflineEngine
