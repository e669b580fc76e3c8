import Foundation
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

@Suite(Hang.timeLimit(minutes: 2)) struct StorageLocationTests {
    @Test func p1_safeIntegrationIdIsUsedAsIs() {
        #expect(StorageLocation.folderName(forIntegrationId: "a1b2-c3_d4.e5") == "a1b2-c3_d4.e5")
    }

    @Test(arguments: ["a/b", "../../etc", ".hidden", "", ".", "..", "with space", "ünïcode", String(repeating: "x", count: 200)])
    func p1_unsafeIntegrationIdBecomesASafeDistinctFolderName(id: String) {
        let name = StorageLocation.folderName(forIntegrationId: id)
        #expect(!name.isEmpty && !name.hasPrefix("."))
        #expect(!name.contains("/"))
        #expect(name.count <= 64 + 17)
        #expect(name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || "0123456789-_.".unicodeScalars.contains($0)) })
        #expect(StorageLocation.folderName(forIntegrationId: id) == name, "stable")
    }

    @Test func p1_idsThatSanitiseAlikeGetDifferentFolders() {
        let slash = StorageLocation.folderName(forIntegrationId: "a/b")
        let underscore = StorageLocation.folderName(forIntegrationId: "a_b")
        #expect(slash != underscore)
        #expect(underscore == "a_b")
    }

    @Test func p1_defaultDirectoryIsOneFolderPerIntegration() {
        let first = StorageLocation.defaultDirectory(integrationId: "project-1")
        let second = StorageLocation.defaultDirectory(integrationId: "project-2")
        #expect(first.lastPathComponent == "project-1")
        #expect(first.deletingLastPathComponent() == second.deletingLastPathComponent())
        #expect(first.deletingLastPathComponent().lastPathComponent == "RealtimeSegments")
    }

    @Test func p1_linuxDataHomeFollowsXDG() {
        #expect(StorageLocation.dataHome(environment: ["XDG_DATA_HOME": "/data/me"], homeDirectory: "/home/me").path == "/data/me")
        #expect(StorageLocation.dataHome(environment: [:], homeDirectory: "/home/me").path == "/home/me/.local/share")
        #expect(
            StorageLocation.dataHome(environment: ["XDG_DATA_HOME": "relative/path"], homeDirectory: "/home/me").path
                == "/home/me/.local/share", "a relative XDG_DATA_HOME is invalid and ignored")
    }
}
