import Foundation

/// Where the SDK keeps its files by default (see Behaviour P1).
package enum StorageLocation {
    /// The folder inside the platform's data directory that holds one sub-folder per integration.
    static let sdkFolderName = "RealtimeSegments"
    /// The longest folder name used as is; longer ids are shortened and made unique by a hash.
    static let maximumFolderNameLength = 64

    /// The default storage directory of the integration `integrationId`: a folder of its own inside
    /// the platform's application-support directory.
    ///
    /// - Apple platforms: `Library/Application Support/[<bundle id>/]RealtimeSegments/<id>` (the
    ///   bundle id keeps apps apart on macOS, where that directory is shared); on tvOS, which gives
    ///   apps no persistent local storage, `Library/Caches/…` (the system may purge it).
    /// - Linux and others: `$XDG_DATA_HOME/RealtimeSegments/<id>`, or `~/.local/share/…` when
    ///   `XDG_DATA_HOME` is unset or not absolute (as the XDG specification says).
    ///
    /// The id is turned into a safe folder name: letters, digits, `-`, `_` and `.` are kept, and an id
    /// that needed changes gets a stable hash appended so distinct ids never share a folder. Nothing is
    /// created here: the stores create the directory, owner-only, on first use.
    package static func defaultDirectory(integrationId: String) -> URL {
        applicationDataDirectory()
            .appendingPathComponent(sdkFolderName, isDirectory: true)
            .appendingPathComponent(folderName(forIntegrationId: integrationId), isDirectory: true)
    }

    /// An integration id for an integration identified by a secret (an API key): `<kind>-` and the
    /// first 32 hex digits of a SHA-256 of the secret, so the folder name — visible to backup tools,
    /// file listings and crash reports — never reveals the key (see Behaviour P4) and distinct keys never
    /// share a folder.
    package static func integrationId(kind: String, secret: String) -> String {
        kind + "-" + String(SHA256.hexDigest(Array("RealtimeSegments storage folder\n\(secret)".utf8)).prefix(32))
    }

    /// The digest that names an integration — its backend, base URL and storage — in what it
    /// stores (see Behaviour D1): equal for equal descriptions, and revealing nothing of them.
    package static func integrationDigest(_ description: String) -> String {
        String(SHA256.hexDigest(Array("RealtimeSegments integration\n\(description)".utf8)).prefix(32))
    }

    /// Renames the folder of an earlier version, named after the secret itself, to its hashed
    /// name, so no key is left in a folder name. Nothing happens when there is no old folder or the
    /// new one already exists; a failure is ignored (the new folder then starts empty).
    package static func moveLegacyFolder(_ legacy: URL, to current: URL) {
        let manager = FileManager.default
        guard legacy.path != current.path, manager.fileExists(atPath: legacy.path),
            !manager.fileExists(atPath: current.path)
        else { return }
        try? POSIXFile.move(legacy.path, over: current.path)
    }

    /// A folder name for `integrationId` that is safe on every file system and distinct for
    /// distinct ids: letters, digits, `-`, `_` and `.` are kept; when anything had to change
    /// (other characters, a leading dot, an empty or over-long id) a stable hash of the original
    /// id is appended, so `a/b` and `a_b` never share a folder.
    static func folderName(forIntegrationId integrationId: String) -> String {
        let safe = String(integrationId.unicodeScalars.map { isSafe($0) ? Character($0) : "_" })
        var name = safe
        if name.hasPrefix(".") { name = "_" + name.dropFirst() }
        if name.count > maximumFolderNameLength { name = String(name.prefix(maximumFolderNameLength)) }
        if name == integrationId && !name.isEmpty { return name }
        return (name.isEmpty ? "integration" : name) + "-" + stableHash(integrationId)
    }

    /// The per-user data directory of the platform.
    static func applicationDataDirectory() -> URL {
        #if canImport(Darwin)
        #if os(tvOS)
        // tvOS gives apps no persistent local storage: Application Support cannot be created on a
        // device, Caches can (and may be purged).
        let directory = FileManager.SearchPathDirectory.cachesDirectory
        let fallback = "Library/Caches"
        #else
        let directory = FileManager.SearchPathDirectory.applicationSupportDirectory
        let fallback = "Library/Application Support"
        #endif
        let support = FileManager.default.urls(for: directory, in: .userDomainMask).first
            ?? URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(fallback)
        guard let bundleId = Bundle.main.bundleIdentifier, !bundleId.isEmpty else { return support }
        return support.appendingPathComponent(folderName(forIntegrationId: bundleId), isDirectory: true)
        #else
        return dataHome(environment: ProcessInfo.processInfo.environment, homeDirectory: NSHomeDirectory())
        #endif
    }

    /// The XDG data home: `$XDG_DATA_HOME` when it is an absolute path, else `<home>/.local/share`.
    static func dataHome(environment: [String: String], homeDirectory: String) -> URL {
        if let configured = environment["XDG_DATA_HOME"], configured.hasPrefix("/") {
            return URL(fileURLWithPath: configured, isDirectory: true)
        }
        return URL(fileURLWithPath: homeDirectory, isDirectory: true)
            .appendingPathComponent(".local", isDirectory: true)
            .appendingPathComponent("share", isDirectory: true)
    }

    private static func isSafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", "_", ".": true
        default: false
        }
    }

    /// FNV-1a over the UTF-8 bytes, as 16 hex digits: stable across launches and platforms,
    /// unlike `hashValue`, so the same id always finds the same folder.
    private static func stableHash(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
