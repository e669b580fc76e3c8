import Foundation
import RealtimeSegments
import SegmentsTesting
import Testing

/// Issue 32 finding 18 (P5, R1, A3) on real clients and files: a client let go of without
/// `stop()` while its customer's save is still queued hands the folder over with that customer;
/// the next client keeps it across a `stop()` and a `configure` again, while the file still holds
/// the older one.
@Suite(Hang.timeLimit(minutes: 1)) struct HandedOverCustomerEndToEndTests {
    let directory = TemporaryDirectory()

    func client(_ storageQueue: DispatchQueue) -> SegmentsClient {
        SegmentsClient(
            options: SegmentsClient.Options(
                runtime: SegmentsRuntime(scheduler: TestScheduler(), logger: RecordingLogger()), storage: .directory(directory.url),
                storageQueue: storageQueue))
    }

    var configuration: SegmentsClient.Configuration {
        .init(
            backend: .custom(id: "p5", repository: RecordingSegmentRepository(), uploader: RecordingEventUploader()),
            flushingMode: .manual)
    }

    @Test func p5_r1_aStoppedClientConfiguredAgainKeepsTheHandedOverCustomerWhileThePreviousOwnersSaveIsQueued() throws {
        defer { directory.remove() }
        let firstQueue = DispatchQueue(label: "p5-tests.first-storage")
        let secondQueue = DispatchQueue(label: "p5-tests.second-storage")
        var first: SegmentsClient? = client(firstQueue)
        try first?.configure(configuration)
        drained(firstQueue)  // the new customer is saved
        let gate = DispatchSemaphore(value: 0)
        firstQueue.async { gate.wait() }  // the first client's queued work waits
        defer { gate.signal() }

        try first?.identifyCustomer(customerIds: ["registered": "u2"], properties: [:], timestamp: nil)
        let identified = try #require(first?.customerIds)
        first = nil  // let go of without stop: the save of `identified` is still queued

        let second = client(secondQueue)
        try second.configure(configuration)
        #expect(second.customerIds == identified, "handed over with the folder")
        second.stop()
        try second.configure(configuration)
        #expect(second.customerIds == identified, "not the older customer the file still holds")

        gate.signal()
        drained(firstQueue)
        drained(secondQueue)
        #expect(second.customerIds == identified)
    }
}
