import Foundation

/// A fresh directory per test, removed afterwards, with the small file helpers the tests need.
struct TemporaryDirectory {
    /// The directory itself.
    let root: URL

    /// The storage directory handed to stores: a not-yet-existing child, so the stores' own
    /// creation of it (owner-only) is exercised too.
    var storage: URL { root.appendingPathComponent("storage", isDirectory: true) }

    /// Behaviour P7 refuses a storage directory writable by its group. With a umask of 002 (common
    /// on Linux desktops) every directory a test plants would be, and the tests would test the
    /// refusal instead of what they name: the test process creates with 022, as CI does, whatever
    /// the shell's umask. (The SDK never depends on it: it sets the modes it creates exactly.)
    static let groupWriteMasked: Void = { _ = umask(0o022) }()

    /// Runs `body` with a new directory and removes it afterwards, whatever happens.
    static func with<Result>(_ body: (TemporaryDirectory) throws -> Result) throws -> Result {
        _ = groupWriteMasked
        let root = FileManager.default.temporaryDirectory
            .appendingPathComponent("segments-persistence-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        return try body(TemporaryDirectory(root: root))
    }

    /// The URL of `name` in the storage directory.
    func file(_ name: String) -> URL {
        storage.appendingPathComponent(name, isDirectory: false)
    }

    /// Writes raw bytes to `name` in the storage directory, creating it if needed.
    func write(_ data: Data, to name: String) throws {
        try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
        try data.write(to: file(name))
    }

    /// Writes text to `name` in the storage directory.
    func write(_ text: String, to name: String) throws {
        try write(Data(text.utf8), to: name)
    }

    /// The bytes of `name`, or `nil` when it does not exist.
    func contents(of name: String) -> Data? {
        try? Data(contentsOf: file(name))
    }

    /// The text of `name`, or `nil`.
    func text(of name: String) -> String? {
        contents(of: name).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The names in the storage directory, sorted.
    func entries() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: storage.path)) ?? []).sorted()
    }

    /// The permission bits of `url`.
    static func permissions(of url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }
}

extension TemporaryDirectory {
    /// ``with(_:)`` for asynchronous tests.
    static func withAsync<Result>(_ body: (TemporaryDirectory) async throws -> Result) async throws -> Result {
        _ = groupWriteMasked
        let root = FileManager.default.temporaryDirectory
            .appendingPathComponent("segments-persistence-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        return try await body(TemporaryDirectory(root: root))
    }
}
