import Foundation
import SegmentsDomain
@testable import SegmentsPersistence
import SegmentsTesting
import Testing

/// Behaviour P4: a folder name never reveals a key. Integrations identified by a secret (ODP's API key)
/// get a folder named by a SHA-256 of it; the folder of an older version is renamed.
@Suite(Hang.timeLimit(minutes: 2)) struct SecretFolderNameTests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
    ])
    func sha256MatchesTheFIPSExamples(message: String, expected: String) {
        #expect(SHA256.hexDigest(Array(message.utf8)) == expected)
    }

    @Test func sha256HandlesMessagesAcrossBlockBoundaries() {
        // 1,000 × "a": several blocks, and a length whose padding needs a block of its own at 56…63.
        #expect(
            SHA256.hexDigest(Array(repeating: UInt8(ascii: "a"), count: 1_000))
                == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }

    @Test func p4_theFolderOfASecretNeverContainsIt() {
        let key = "W4WzcEs-ABgXorzY7h1LCQ"
        let id = StorageLocation.integrationId(kind: "odp", secret: key)
        let folder = StorageLocation.defaultDirectory(integrationId: id)

        #expect(!folder.path.contains(key))
        #expect(!folder.path.contains(String(key.prefix(8))))
        #expect(id.hasPrefix("odp-") && id.count == 4 + 32)
        #expect(StorageLocation.integrationId(kind: "odp", secret: key) == id, "stable across launches")
        #expect(StorageLocation.integrationId(kind: "odp", secret: key + "x") != id, "distinct keys, distinct folders")
    }

    @Test func p4_aFolderNamedAfterTheKeyIsRenamedToTheHashedName() throws {
        try TemporaryDirectory.with { dir in
            let legacy = dir.root.appendingPathComponent("odp-W4WzcEs-ABgXorzY7h1LCQ", isDirectory: true)
            let current = dir.root.appendingPathComponent("odp-0123", isDirectory: true)
            try FileManager.default.createDirectory(at: legacy, withIntermediateDirectories: true)
            try Data("{}".utf8).write(to: legacy.appendingPathComponent("customer.json"))

            StorageLocation.moveLegacyFolder(legacy, to: current)

            #expect(!FileManager.default.fileExists(atPath: legacy.path))
            #expect(FileManager.default.fileExists(atPath: current.appendingPathComponent("customer.json").path))
        }
    }

    @Test func p4_anExistingHashedFolderIsNeverOverwritten() throws {
        try TemporaryDirectory.with { dir in
            let legacy = dir.root.appendingPathComponent("old", isDirectory: true)
            let current = dir.root.appendingPathComponent("new", isDirectory: true)
            try FileManager.default.createDirectory(at: legacy, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: current, withIntermediateDirectories: true)
            try Data("kept".utf8).write(to: current.appendingPathComponent("customer.json"))

            StorageLocation.moveLegacyFolder(legacy, to: current)

            #expect(try Data(contentsOf: current.appendingPathComponent("customer.json")) == Data("kept".utf8))
        }
    }

    @Test func p4_aStorageErrorNamesNeitherTheFolderNorThePath() throws {
        try TemporaryDirectory.with { dir in
            // A file where the folder should be: creating the directory fails.
            let folder = dir.root.appendingPathComponent("odp-SECRETKEY", isDirectory: true)
            try Data().write(to: folder)
            let store = FileCustomerStore(directory: folder, logger: LineLog())

            let error = #expect(throws: SegmentsError.self) { try store.save(CustomerIds(cookie: "c")) }

            #expect(error?.code == .storage)
            let text = error.map { "\($0) \(String(reflecting: $0))" } ?? ""
            #expect(!text.contains("SECRETKEY"))
            #expect(!text.contains(dir.root.path))
        }
    }
}
