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

/// A storage directory's owner lock that is held only for a moment — by the copy of its descriptor
/// that a child process being started holds until its `exec` — is waited out and taken once it is
/// free; one held longer is another process's, and refused (see Behaviour P5).
@Suite(Hang.timeLimit(minutes: 1)) struct DirectoryLockContentionTests {
    @Test func p5_aLockHeldForAMomentIsTakenOnceItIsFree() throws {
        try TemporaryDirectory.with { dir in
            let attempts = StorageDirectoryLock.momentaryHolderAttempts
            let lock = try FileOperationLog.failing(
                [InjectedFileFault(.lock, errno: EWOULDBLOCK, times: attempts - 1)], under: dir.root.path
            ) {
                try StorageDirectoryLock.waitingOutMomentaryHolders { try StorageDirectoryLock.acquire(dir.storage) }
            }
            // Held: a second descriptor of the lock file is refused at once, as another process would be.
            let error = #expect(throws: SegmentsError.self) { try StorageDirectoryLock.acquire(dir.storage) }
            #expect(error?.message.contains("in use by another process") == true)
            withExtendedLifetime(lock) {}
        }
    }

    @Test func p5_aLockStillHeldAfterItsRetriesIsAnotherProcesssAndRefused() throws {
        try TemporaryDirectory.with { dir in
            let attempts = StorageDirectoryLock.momentaryHolderAttempts
            let error = FileOperationLog.failing(
                [InjectedFileFault(.lock, errno: EWOULDBLOCK, times: attempts)], under: dir.root.path
            ) {
                #expect(throws: SegmentsError.self) {
                    try StorageDirectoryLock.waitingOutMomentaryHolders { try StorageDirectoryLock.acquire(dir.storage) }
                }
            }
            #expect(error?.code == .storage)
            #expect(error?.message.contains("in use by another process") == true)
            // Nothing was left held by the refused attempt.
            withExtendedLifetime(try StorageDirectoryLock.acquire(dir.storage)) {}
        }
    }

    #if os(macOS) || os(Linux)  // starts child processes (`Process`)
        /// The flake this guards against (CI, `CaseInsensitiveStorageTests`): a configure that
        /// moved an earlier folder released its lock and took the folder's lock again at once, while
        /// another test's thread was starting a child process that still held a copy of the first
        /// descriptor; the configure was refused as if another process owned the folder.
        @Test func p5_aLockReleasedWhileAnotherThreadStartsChildProcessesIsTakenAgain() async throws {
            let (spawned, cycles, refusals) = try await onDedicatedThread {
                try TemporaryDirectory.with { dir in
                    let stop = Locked(false)
                    let spawned = Locked(0)
                    let spawnerEnded = DispatchSemaphore(value: 0)
                    let spawner = Thread {
                        defer { spawnerEnded.signal() }
                        while !stop.value {
                            let child = Process()
                            child.executableURL = URL(fileURLWithPath: "/usr/bin/true")
                            guard (try? child.run()) != nil else { return }
                            child.waitUntilExit()
                            spawned.withLock { $0 += 1 }
                        }
                    }
                    spawner.start()
                    defer {
                        stop.withLock { $0 = true }
                        _ = spawnerEnded.wait(timeout: .now() + 30)
                    }

                    var cycles = 0, refusals = 0
                    let deadline = Date().addingTimeInterval(20)
                    // Short: while it runs, every descriptor of the test process (other tests'
                    // listeners and locks too) is copied into each child for a moment.
                    while (cycles < 500 || spawned.value < 60) && Date() < deadline {
                        do {
                            let lock = try StorageDirectoryLock.waitingOutMomentaryHolders {
                                try StorageDirectoryLock.acquire(dir.storage)
                            }
                            withExtendedLifetime(lock) {}
                        } catch {
                            refusals += 1
                        }
                        cycles += 1
                    }
                    return (spawned.value, cycles, refusals)
                }
            }
            #expect(spawned >= 60, "child processes were started meanwhile")
            #expect(refusals == 0, "\(refusals) of \(cycles) acquisitions were refused")
        }
    #endif
}
