// Issue 33's behaviours through the Exponea-shaped app code, black-box over loopback: the real
// URLSession transport against the emulator on 127.0.0.1, file storage in a folder of its own.
import Foundation
import RealtimeSegments
import SegmentsEmulator
import SegmentsTesting
import Testing

@Suite(Hang.timeLimit(minutes: 2)) struct StopAndCallsBeforeConfigureEmulatorTests {
    /// E1 rev 4, E6 rev 4, A3 rev 4: a call before configure is uploaded after it with the
    /// configured customer, its NaN dropped; stopIntegration uploads what is queued, then forgets
    /// the customer and the queue; its completion runs on the main queue and can configure, which
    /// starts a new customer.
    @Test func e1_e6_a3_aCallBeforeConfigureGoesUpWithTheConfiguredCustomerAndStopFlushesThenForgets() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("compat-stop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: folder) }
        let emulator = SegmentsEmulator()
        let baseUrl = try emulator.start().absoluteString
        defer { emulator.stop() }
        let logger = RecordingLogger()
        let client = SegmentsClient(
            options: SegmentsClient.Options(
                runtime: SegmentsRuntime(logger: logger), uploadRetry: RetryBackoff(initial: 0.05, maximum: 0.2),
                transport: URLSessionSegmentsTransport(), storage: .directory(folder)))
        let exponea = Exponea(client: client)
        let analytics = ShopAnalytics(exponea: exponea)

        analytics.trackView(["screen": "home", "ratio": Double.nan], eventType: "early")
        #expect(logger.messages.contains { $0.contains("properties.ratio") }, "\(logger.messages)")
        analytics.configureWithoutAutomaticFeatures(projectToken: "project", accessToken: "key", baseUrl: baseUrl)
        let first = try #require(exponea.customerCookie)
        #expect(emulator.events.isEmpty, "manual flushing: nothing sent yet")

        let onMain = LockedValue<Bool?>(nil)
        let second = LockedValue<String?>(nil)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            analytics.leave {
                onMain.withLock { $0 = Thread.isMainThread || DispatchQueue.isMain }
                analytics.configureWithoutAutomaticFeatures(projectToken: "project", accessToken: "key", baseUrl: baseUrl)
                second.withLock { $0 = exponea.customerCookie }
                done.resume()
            }
        }
        let early = try #require(emulator.events.first { $0.eventType == "early" })
        #expect(early.customerIds["cookie"] == first, "stamped with the configured customer")
        #expect(early.properties == ["screen": .string("home")], "the NaN dropped, the rest tracked")
        #expect(emulator.events.count == 1)
        #expect(onMain.value == true)
        #expect(second.value != nil && second.value != first, "a new customer after the stop")
        #expect(exponea.isConfigured)
        client.stop()
    }
}

extension DispatchQueue {
    private static let mainKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// Whether the code runs on the main queue (on Linux its thread is not always the main thread).
    static var isMain: Bool { getSpecific(key: mainKey) == true }
}
