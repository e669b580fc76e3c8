import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Behaviour R2 on Apple platforms: the batched sync is `F_FULLFSYNC`, which reaches the drive's
/// media as Darwin's `fsync` does not; a file system that refuses it gets `fsync`. Darwin's plan
/// runs here with the system calls replaced, so the decision is tested on Linux too.
@Suite(Hang.timeLimit(minutes: 1)) struct MediaSyncTests {
    /// Runs `plan` on a real descriptor, with `answers` as each call's result; returns the calls made.
    private func run(_ plan: [SyncCall], answers: [SyncCall: Int32]) throws -> [SyncCall] {
        try TemporaryDirectory.with { dir in
            let path = dir.storage.appendingPathComponent("file").path
            try StorageDirectory(url: dir.storage).create()
            let fd = try POSIXFile.createExclusive(path)
            defer { _ = close(fd) }
            var made: [SyncCall] = []
            try POSIXFile.sync(fd, path: path, plan: plan) { call, _ in
                made.append(call)
                return answers[call] ?? -1
            }
            return made
        }
    }

    @Test func r2_onApplePlatformsTheSyncIsFullFsyncAndNothingElseWhenItSucceeds() throws {
        #expect(try run(SyncCall.plan(darwin: true), answers: [.fullFsync: 0, .fsync: 0]) == [.fullFsync])
    }

    @Test func r2_onApplePlatformsAFileSystemThatRefusesFullFsyncGetsFsync() throws {
        #expect(try run(SyncCall.plan(darwin: true), answers: [.fullFsync: -1, .fsync: 0]) == [.fullFsync, .fsync])
    }

    @Test func r2_whenEveryCallOfThePlanFailsTheSyncFailsAsStorage() throws {
        let error = #expect(throws: SegmentsError.self) {
            _ = try run(SyncCall.plan(darwin: true), answers: [:])
        }
        #expect(error?.code == .storage)
    }

    /// Issue 34 item 8: the directory sync after a rename (customer.json, the baseline) was a plain
    /// `fsync` on Darwin, which stops at the drive's cache: a power cut could bring back the file
    /// a rename replaced — a logged-out customer's ids. It follows the files' plan now.
    @Test func a1_onApplePlatformsADirectoryIsSyncedWithFullFsyncThenFsync() throws {
        #expect(SyncCall.directoryPlan(darwin: true) == [.fullFsync, .fsync])
        #expect(SyncCall.directoryPlan(darwin: false) == [.fsync])
        try TemporaryDirectory.with { dir in
            try StorageDirectory(url: dir.storage).create()
            for (answers, expected) in [
                ([SyncCall.fullFsync: Int32(0)], [SyncCall.fullFsync]),
                ([.fullFsync: -1, .fsync: 0], [.fullFsync, .fsync]),
                ([:], [.fullFsync, .fsync]),
            ] {
                var made: [SyncCall] = []
                POSIXFile.syncDirectory(dir.storage.path, plan: SyncCall.directoryPlan(darwin: true)) { call, _ in
                    made.append(call)
                    return answers[call] ?? -1
                }
                #expect(made == expected, "answers \(answers)")
            }
        }
        #if canImport(Darwin)
        #expect(SyncCall.platformDirectoryPlan == [.fullFsync, .fsync])
        #else
        #expect(SyncCall.platformDirectoryPlan == [.fsync])
        #endif
    }

    @Test func r2_elsewhereTheSyncIsFdatasync() throws {
        #expect(try run(SyncCall.plan(darwin: false), answers: [.fdatasync: 0]) == [.fdatasync])
    }

    /// The plan a file's sync uses here: `F_FULLFSYNC` then `fsync` on Darwin, `fdatasync` elsewhere.
    @Test func r2_thePlatformsFileSyncPlanIsItsOwn() {
        #if canImport(Darwin)
        #expect(SyncCall.platformPlan == [.fullFsync, .fsync])
        #else
        #expect(SyncCall.platformPlan == [.fdatasync])
        #endif
    }

    /// The real system calls: off Darwin `F_FULLFSYNC` does not exist and fails with `ENOTSUP`, so
    /// the plan's next call must do the work; on Darwin the first call succeeds. Counted once.
    @Test func r2_theRealCallsFallBackToTheNextOneAndCountOneSync() throws {
        try TemporaryDirectory.with { dir in
            let path = dir.storage.appendingPathComponent("file").path
            try StorageDirectory(url: dir.storage).create()
            let fd = try POSIXFile.createExclusive(path)
            defer { _ = close(fd) }
            #if !canImport(Darwin)
            #expect(SyncCall.perform(.fullFsync, fd) == -1)
            #expect(errno == ENOTSUP)
            #endif
            let counts = try FileOperationLog.counting(under: dir.root.path) {
                try POSIXFile.sync(fd, path: path, plan: [.fullFsync, .fdatasync])
            }.counts
            #expect(counts.syncs == 1)
        }
    }
}
