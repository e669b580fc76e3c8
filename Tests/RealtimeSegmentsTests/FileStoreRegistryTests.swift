import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import RealtimeSegments
@testable import SegmentsPersistence

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One set of file stores per directory, so writers on one directory share one lock (P1, E4).
@Suite(Hang.timeLimit(minutes: 2)) struct FileStoreRegistryTests {
    @Test func p1_oneDirectoryGetsOneSetOfStoresWhileInUse() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let logger = RecordingLogger()
        let first = FileStoreRegistry.stores(in: directory.url, logger: logger)
        let again = FileStoreRegistry.stores(in: directory.url.appendingPathComponent("."), logger: logger)
        let other = TemporaryDirectory()
        defer { other.remove() }
        let elsewhere = FileStoreRegistry.stores(in: other.url, logger: logger)
        #expect(first.events === again.events && first.customer === again.customer && first.baseline === again.baseline)
        #expect(first.events !== elsewhere.events)
    }

    @Test func e4_aClientConfiguredTwiceKeepsEveryQueuedEvent() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let harness = ClientHarness(storage: .directory(directory.url))
        try harness.configure(flushingMode: .manual)
        try harness.client.trackEvent(properties: ["n": 1], timestamp: nil, eventType: "a")
        try harness.configure(flushingMode: .manual)
        try harness.client.trackEvent(properties: ["n": 2], timestamp: nil, eventType: "b")
        #expect(await harness.client.countQueuedEvents() == 2)
    }

    /// A client that takes over a folder right after another client of the process stopped reads
    /// what the first one saved, even while the first one's saves still wait on its storage queue.
    @Test func r1_p5_e4_theNextClientOnAFolderGetsWhatThePreviousOneStillHadQueuedWithoutWaitingForIt() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let firstQueue = DispatchQueue(label: "test.first-storage")
        let gate = DispatchSemaphore(value: 0)
        firstQueue.async { gate.wait() }  // the first client's disk work waits behind this
        func client(_ queue: DispatchQueue) -> SegmentsClient {
            SegmentsClient(
                options: .init(runtime: SegmentsRuntime(scheduler: TestScheduler(), logger: RecordingLogger()), storage: .directory(directory.url), storageQueue: queue))
        }
        let configuration = SegmentsClient.Configuration(
            backend: .custom(id: "t", repository: RecordingSegmentRepository(), uploader: RecordingEventUploader()),
            flushingMode: .manual)
        let first = client(firstQueue)
        try first.configure(configuration)  // a new cookie: its save is queued behind the gate
        let cookie = first.customerCookie
        first.stop()

        let second = client(DispatchQueue(label: "test.second-storage"))
        let configured = Locked<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? second.configure(configuration)
            configured.withLock { $0 = second.customerCookie }
            done.signal()
        }
        // Configure never waits for disk work (Behaviour R1): it finishes while the first client's
        // save is still held, and takes the customer the first client handed over with the folder.
        let finishedAlone = await onDedicatedThread { done.wait(timeout: .now() + 10) == .success }
        #expect(finishedAlone, "configure waited for the previous client's storage queue")
        #expect(configured.value == cookie)
        gate.signal()  // the first client's save is written now, and only now
        let finished = finishedAlone ? true : await onDedicatedThread { done.wait(timeout: .now() + 30) == .success }
        #expect(finished)
        second.stop()
    }

    /// A release that comes late — for a claim the same client has replaced since (configure S, T,
    /// then S again, while its end of S is still being carried out) — leaves the directory owned,
    /// so no second client can take it from under the first (see Behaviour P5, A4).
    @Test func p5_a4_aReleaseForAClaimThatWasReplacedLeavesTheDirectoryOwned() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let logger = RecordingLogger()
        let owner = NSObject(), other = NSObject()
        let queue = DispatchQueue(label: "test.owner"), otherQueue = DispatchQueue(label: "test.other")
        let first = try FileStoreRegistry.claim(directory.url, for: owner, queue: queue, logger: logger)
        let second = try FileStoreRegistry.claim(directory.url, for: owner, queue: queue, logger: logger)
        FileStoreRegistry.release(first, customer: CustomerIds(cookie: "late"), writes: DispatchGroup())
        #expect(throws: SegmentsError.self) {
            try FileStoreRegistry.claim(directory.url, for: other, queue: otherQueue, logger: logger)
        }
        FileStoreRegistry.release(second, customer: CustomerIds(cookie: "current"), writes: DispatchGroup())
        let taken = try FileStoreRegistry.claim(directory.url, for: other, queue: otherQueue, logger: logger)
        #expect(taken.previousCustomer == CustomerIds(cookie: "current"))
        #expect(taken.previousWrites != nil)
        FileStoreRegistry.release(taken, customer: nil, writes: DispatchGroup())
    }

    /// A configuration's end frees its folder before the ending call returns, and marks its writes
    /// in the order of the engine's steps; the two may come in either order (another thread may be
    /// carrying out the steps). Either way the next owner gets the folder at once and waits, on its
    /// storage queue, for exactly the writes queued before the mark (see Behaviour P5, R1).
    @Test(arguments: [true, false])
    func p5_r1_theNextOwnerWaitsForThePreviousOwnersWritesWhicheverHandOverStepComesFirst(releaseFirst: Bool) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let logger = RecordingLogger()
        let owner = NSObject(), next = NSObject()
        let queue = DispatchQueue(label: "test.owner"), nextQueue = DispatchQueue(label: "test.next")
        let gate = DispatchSemaphore(value: 0)
        let written = Locked(false)
        queue.async {
            _ = gate.wait(timeout: .now() + 30)
            written.withLock { $0 = true }  // the owner's last write
        }
        let handOver = FileStoreRegistry.HandOver(
            try FileStoreRegistry.claim(directory.url, for: owner, queue: queue, logger: logger), storageQueue: queue)
        if releaseFirst {
            handOver.release(endingWith: CustomerIds(cookie: "ended"))
            handOver.writesQueued()
        } else {
            handOver.writesQueued()
            handOver.release(endingWith: CustomerIds(cookie: "ended"))
        }

        let taken = try FileStoreRegistry.claim(directory.url, for: next, queue: nextQueue, logger: logger)
        #expect(taken.previousCustomer == CustomerIds(cookie: "ended"))
        guard case .released(let writes)? = taken.previousWrites else {
            Issue.record("the next owner was handed no writes to wait for: \(String(describing: taken.previousWrites))")
            return
        }
        #expect(writes.wait(timeout: .now()) == .timedOut, "the owner's write is still queued")
        gate.signal()
        #expect(writes.wait(timeout: .now() + Hang.scaled(30)) == .success)
        #expect(written.value, "done only after the owner's write")
        FileStoreRegistry.release(taken, customer: nil, writes: DispatchGroup())
    }

    /// A process that uses many folders one after another keeps none of them: a released folder's
    /// entry goes once the writes its owner queued are done (before, the next owner is still
    /// handed them, and the customer). Each entry kept a storage queue, so without this the table
    /// grew with every folder ever used, and every claim filtered all of them (see Behaviour P5, R1).
    @Test func p5_r1_aReleasedFolderIsForgottenOnceItsOwnersWritesAreDone() throws {
        let table = FileStoreRegistry.makeTable()
        let logger = RecordingLogger()
        let folders = (0..<3).map { _ in TemporaryDirectory() }
        defer { folders.forEach { $0.remove() } }
        func entries() -> Int {
            var count = 0
            table.withEntry(of: folders[2].url, make: FileStoreRegistry.Entry.init) { _ in }  // drops what is no longer in use
            table.forEach { _ in count += 1 }
            return count - 1  // not the folder just looked at
        }
        let writes = [DispatchGroup(), DispatchGroup()]
        for (index, group) in writes.enumerated() {
            group.enter()
            let claim = try FileStoreRegistry.claim(
                folders[index].url, for: NSObject(), queue: DispatchQueue(label: "test.owner-\(index)"), logger: logger, in: table)
            FileStoreRegistry.release(claim, customer: CustomerIds(cookie: "c\(index)"), writes: group, in: table)
        }
        #expect(entries() == 2, "both owners' writes are pending")
        writes[0].leave()
        #expect(entries() == 1, "the first folder's writes are done")
        writes[1].leave()
        #expect(entries() == 0)
    }

    /// A folder's lock held for a moment (by a child process being started, which holds a copy of
    /// its descriptor until `exec`) is waited out: the claim succeeds once it is free.
    @Test func p5_aClaimWaitsOutALockHeldForAMoment() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let table = FileStoreRegistry.makeTable()
        let claim = try FileOperationLog.failing(
            [InjectedFileFault(.lock, errno: EWOULDBLOCK, times: StorageDirectoryLock.momentaryHolderAttempts - 1)],
            under: directory.url.path
        ) {
            try FileStoreRegistry.claim(
                directory.url, for: NSObject(), queue: DispatchQueue(label: "test.owner"), logger: RecordingLogger(), in: table)
        }
        #expect(claim.previousCustomer == nil)
        FileStoreRegistry.release(claim, customer: nil, writes: DispatchGroup(), in: table)
    }

    /// A lock still held after the waits is another process's: refused, and the folder is not
    /// left claimed in the process.
    @Test func p5_aClaimOfAFolderWhoseLockStaysHeldIsRefusedAndLeavesNothingClaimed() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let table = FileStoreRegistry.makeTable()
        let error = FileOperationLog.failing(
            [InjectedFileFault(.lock, errno: EWOULDBLOCK, times: StorageDirectoryLock.momentaryHolderAttempts)],
            under: directory.url.path
        ) {
            #expect(throws: SegmentsError.self) {
                try FileStoreRegistry.claim(
                    directory.url, for: NSObject(), queue: DispatchQueue(label: "test.refused"), logger: RecordingLogger(), in: table)
            }
        }
        #expect(error?.message.contains("in use by another process") == true)
        let claim = try FileStoreRegistry.claim(
            directory.url, for: NSObject(), queue: DispatchQueue(label: "test.next"), logger: RecordingLogger(), in: table)
        FileStoreRegistry.release(claim, customer: nil, writes: DispatchGroup(), in: table)
    }
}
