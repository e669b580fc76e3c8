import Foundation
import SegmentsTesting
import Testing

@testable import RealtimeSegments

/// One set of file stores per directory, so writers on one directory share one lock (P1, E4).
@Suite(hangTimeLimit(minutes: 2)) struct FileStoreRegistryTests {
    @Test func p1_oneDirectoryGetsOneSetOfStoresWhileInUse() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let logger = CapturingLogger()
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
        #expect(harness.client.queuedEventCount == 2)
    }
}
