import Foundation
import SegmentsDomain
import SegmentsData
import SegmentsPersistence
import SegmentsTesting
import Testing

@testable import RealtimeSegments

/// Two clients of one process handing storage folders to each other (see Behaviour R1, P5, G4).
@Suite(Hang.timeLimit(minutes: 1)) struct FolderHandOverTests {
    /// Two clients on the default per-integration folders swap integrations (A: P→Q, B: Q→P).
    /// Each new owner's storage queue waits for the previous owner's writes to its folder — only
    /// those queued before the release, so the two queues never wait for each other (a wait for
    /// the other whole queue would: neither baseline would load, no read be answered, G4).
    @Test func r1_g4_twoClientsSwappingFoldersWaitOnlyForEachOthersEarlierWrites() async throws {
        let tag = UUID().uuidString.prefix(8)
        let p = "review-p-\(tag)", q = "review-q-\(tag)"
        let qA = DispatchQueue(label: "review.A"), qB = DispatchQueue(label: "review.B")
        defer {
            // The folders of `.custom(id:)` integrations are named after "custom-<id>"; removed once
            // both storage queues are idle, so no write after the removal makes them again (bounded:
            // the failure this test looks for is a deadlock of these queues).
            if drained(qA, within: 5), drained(qB, within: 5) {
                for id in [p, q] {
                    try? FileManager.default.removeItem(at: StorageLocation.defaultDirectory(integrationId: "custom-\(id)"))
                }
            }
        }
        func client(_ queue: DispatchQueue) -> SegmentsClient {
            SegmentsClient(options: .init(runtime: SegmentsRuntime(scheduler: TestScheduler(), logger: RecordingLogger()), storage: .directory(nil), storageQueue: queue))
        }
        func configuration(_ id: String) -> SegmentsClient.Configuration {
            .init(backend: .custom(id: id, repository: RecordingSegmentRepository(), uploader: RecordingEventUploader()), flushingMode: .manual)
        }
        let a = client(qA), b = client(qB)
        try a.configure(configuration(p))
        try b.configure(configuration(q))
        a.stop()
        b.stop()
        // B's storage queue is still busy with earlier disk work (a slow fsync; here a gate).
        let gate = DispatchSemaphore(value: 0)
        qB.async { gate.wait() }
        try b.configure(configuration(p))  // qB.async { qA.sync {} }, behind the gate
        try a.configure(configuration(q))  // qA.async { qB.sync {} }: qA now waits for qB
        gate.signal()
        let drained = await onDedicatedThread {
            let done = DispatchSemaphore(value: 0)
            qA.async { done.signal() }
            return done.wait(timeout: .now() + Hang.scaled(5)) == .success
        }
        #expect(drained, "client A's storage queue never drains: it waits for B's, which waits for A's")
        guard drained else { return }
        let answers = await onDedicatedThread {
            let done = DispatchSemaphore(value: 0)
            qB.async { done.signal() }
            return done.wait(timeout: .now() + Hang.scaled(5)) == .success
        }
        #expect(answers, "client B's storage queue never drains")
        a.stop()
        b.stop()
    }
}
