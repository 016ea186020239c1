/// The product version, printed by `offlinefs --version` and sent as the User-Agent.
public enum OfflineVersion {
    public static let string = "0.1.0"
}
