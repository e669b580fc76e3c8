import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsEmulator
import SegmentsTesting
import Testing

/// The network path over loopback (Behaviour N1, N2): the real URLSession transport against the
/// emulator on 127.0.0.1, the path a `ManualNetworkPath`.
@Suite(Hang.timeLimit(minutes: 2)) struct NetworkPathEndToEndTests {
    @Test func n1_n2_eventsTrackedOfflineSendNothingThenGoUpInOneFlushWithAFreshRead() async throws {
        let harness = try EndToEndHarness()
        defer { harness.tearDown() }
        let path = ManualNetworkPath()
        let scheduler = OutstandingWorkScheduler()
        let client = try harness.makeClient(scheduler: scheduler, networkPath: path)
        defer { client.stop() }
        let told = Recorder<[Segment]>()
        client.addListener(category: .discovery(), includeFirstLoad: true) { told.record($0) }
        #expect(await eventually { told.count == 1 })
        #expect(told.all == [[]])

        path.goOffline()
        #expect(await eventually { scheduler.outstanding == 0 }, "the first load's work is done")
        let requestsBefore = harness.emulator.requests.count
        for sku in ["A-1", "A-2", "A-3"] {
            try client.trackEvent(properties: ["sku": .string(sku)], timestamp: nil, eventType: "view_item")
        }
        // A read that needs the network fails at once, and so does a flush.
        await #expect {
            try await client.getSegments(force: true, category: .discovery())
        } throws: { error in
            (error as? SegmentsError)?.reason == .offline
        }
        let flushed = await client.flush()
        if case .success = flushed { Issue.record("a flush offline succeeded") }
        // Every piece of the client's work has run or been withdrawn (a proof by count): none sent a request.
        #expect(await eventually { scheduler.outstanding == 0 })
        #expect(harness.emulator.requests.count == requestsBefore, "\(harness.emulator.requests.map(\.route))")
        #expect(client.queuedEventCount == 3)

        path.goOnline()
        #expect(await eventually { harness.emulator.events.count == 3 && client.queuedEventCount == 0 })
        // One flush: each event went up once, in order, with no failed attempt before it.
        let uploads = harness.emulator.requests.dropFirst(requestsBefore).filter { $0.route == .event }
        #expect(uploads.count == 3)
        #expect(harness.emulator.events.map { $0.properties["sku"] } == [.string("A-1"), .string("A-2"), .string("A-3")])
        // A fresh read, and the listener told what the uploaded events made of the customer.
        #expect(try await client.getSegments(force: true, category: .discovery()) == [.browsers])
        #expect(await eventually { told.all.last == [.browsers] })
    }
}
