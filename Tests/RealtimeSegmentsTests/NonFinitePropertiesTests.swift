import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// A non-finite number in properties is dropped with one warning naming its key path, and the rest
/// of the item is tracked (Behaviour E6, rev 4).
@Suite(Hang.timeLimit(minutes: 2)) struct NonFinitePropertiesTests {
    func warnings(_ world: RecordingStoresHarness) -> [String] {
        world.harness.logger.entries.filter { $0.level == .warning && $0.message.contains("non-finite") }.map(\.message)
    }

    @Test func e6_aNaNInANestedDictionaryInsideAnArrayIsDroppedWithOneWarningNamingItsPath() async throws {
        let world = RecordingStoresHarness()
        try world.configure()
        let cart: JSONValue = [["price": 1.5], ["price": 2], ["price": .double(.nan), "qty": 1]]
        try world.client.trackEvent(properties: ["sku": "A-1", "cart": cart], timestamp: nil, eventType: "purchase")

        #expect(warnings(world).count == 1)
        #expect(warnings(world).first?.contains("properties.cart[2].price") == true, "\(warnings(world))")
        #expect(warnings(world).first?.hasPrefix("Tracking: trackEvent dropped") == true)
        #expect(world.queued.map(\.properties) == [["sku": "A-1", "cart": [["price": 1.5], ["price": 2], ["qty": 1]]]])
    }

    @Test func e6_infinitiesInArraysAndDictionariesAreDroppedWithOneWarningForTheEvent() async throws {
        let world = RecordingStoresHarness()
        try world.configure()
        let properties: [String: JSONValue] = [
            "scores": [1, .double(-.infinity), 3], "total": .double(.infinity), "meta": ["ok": true, "ratio": .double(.nan)],
        ]
        try world.client.trackEvent(properties: properties, timestamp: nil, eventType: "stats")

        #expect(warnings(world).count == 1, "one warning for the event, naming every path")
        let warning = try #require(warnings(world).first)
        for path in ["properties.scores[1]", "properties.total", "properties.meta.ratio"] {
            #expect(warning.contains(path), "\(path) in \(warning)")
        }
        #expect(world.queued.map(\.properties) == [["scores": [1, 3], "meta": ["ok": true]]])
    }

    @Test func e6_e1_identifyAndCallsBeforeConfigureDropThemTooAndAreTracked() async throws {
        let world = RecordingStoresHarness()
        try world.client.trackEvent(properties: ["price": .double(.nan), "sku": "B"], timestamp: nil, eventType: "early")
        #expect(warnings(world).count == 1, "warned at the call, before configure")
        try world.configure()
        try world.client.identifyCustomer(customerIds: ["registered": "jane"], properties: ["age": .double(.nan)], timestamp: nil)

        #expect(warnings(world).count == 2)
        #expect(warnings(world).last?.contains("identifyCustomer dropped") == true)
        #expect(warnings(world).last?.contains("properties.age") == true)
        #expect(world.queued.map(\.properties) == [["sku": "B"], [:]])
        #expect(world.client.customerIds?.values["registered"] == "jane")
    }

    @Test func e6_theOtherRefusalsStay() async throws {
        let world = RecordingStoresHarness()
        try world.configure()
        var deep: JSONValue = 1
        for _ in 1..<65 { deep = [deep] }
        let tooDeep = #expect(throws: SegmentsError.self) {
            try world.client.trackEvent(properties: ["deep": deep, "bad": .double(.nan)], timestamp: nil, eventType: "x")
        }
        #expect(tooDeep?.message.contains("64 levels") == true)
        let tooLarge = #expect(throws: SegmentsError.self) {
            try world.client.trackEvent(properties: ["big": .string(String(repeating: "x", count: 70_000))], timestamp: nil, eventType: "x")
        }
        #expect(tooLarge?.message.contains("KiB") == true)
        #expect(world.queued.isEmpty)
        #expect(warnings(world).isEmpty, "a refused event warns of nothing it dropped")
    }
}
