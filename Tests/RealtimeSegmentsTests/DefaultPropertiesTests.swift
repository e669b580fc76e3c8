import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// Default properties (Behaviour E8): set in the configuration or at run time, added to every
/// tracked event (its own keys win) and, when the configuration allows it, to every customer update.
@Suite(Hang.timeLimit(minutes: 2)) struct DefaultPropertiesTests {
    @Test func e8_theConfigurationsDefaultsAreAddedToEveryEventAndTheEventsOwnKeysWin() async throws {
        let world = RecordingStoresHarness()
        try world.configure(defaultProperties: ["app": "shop", "plan": "free"])
        try world.client.trackEvent(properties: ["plan": "gold"], timestamp: nil, eventType: "a")
        try world.client.trackEvent(properties: [:], timestamp: nil, eventType: "b")
        #expect(world.queued.map(\.properties) == [["app": "shop", "plan": "gold"], ["app": "shop", "plan": "free"]])
        #expect(world.client.defaultProperties == ["app": "shop", "plan": "free"])
    }

    @Test(arguments: [true, false])
    func e8_customerUpdatesGetThemOnlyWhenTheConfigurationAllowsIt(allowed: Bool) async throws {
        let world = RecordingStoresHarness()
        try world.configure(defaultProperties: ["app": "shop"], allowDefaultCustomerProperties: allowed)
        try world.client.identifyCustomer(customerIds: ["registered": "jane"], properties: ["plan": "gold"], timestamp: nil)
        try world.client.trackEvent(properties: [:], timestamp: nil, eventType: "a")
        let update: [String: JSONValue] = allowed ? ["app": "shop", "plan": "gold"] : ["plan": "gold"]
        #expect(world.queued.map(\.properties) == [update, ["app": "shop"]])
    }

    @Test func e8_aRunTimeChangeAppliesToLaterEventsOnly() async throws {
        let world = RecordingStoresHarness()
        let exponea = Exponea(client: world.client)
        try world.configure(defaultProperties: ["version": 1])
        exponea.trackEvent(properties: [:], timestamp: nil, eventType: "before")
        exponea.defaultProperties = ["version": 2, "ratio": Double.nan]  // Exponea's [String: JSONConvertible]
        #expect(world.client.defaultProperties == ["version": 2])
        #expect(world.harness.logger.messages.contains { $0.contains("defaultProperties.ratio") })
        exponea.trackEvent(properties: [:], timestamp: nil, eventType: "after")
        exponea.defaultProperties = nil
        exponea.trackEvent(properties: [:], timestamp: nil, eventType: "none")
        #expect(exponea.defaultProperties == nil && world.client.defaultProperties.isEmpty)
        #expect(world.queued.map(\.properties) == [["version": 1], ["version": 2], [:]])
    }

    @Test func e8_e1_defaultsSetBeforeConfigureApplyAndAConfigurationNamingNoneKeepsThem() async throws {
        let world = RecordingStoresHarness()
        world.client.defaultProperties = ["app": "shop"]
        try world.client.trackEvent(properties: ["n": 1], timestamp: nil, eventType: "waited")
        try world.configure()
        try world.client.trackEvent(properties: ["n": 2], timestamp: nil, eventType: "later")
        #expect(world.queued.map(\.properties) == [["app": "shop", "n": 1], ["app": "shop", "n": 2]])
        try world.configure(defaultProperties: ["app": "store"])
        try world.client.trackEvent(properties: [:], timestamp: nil, eventType: "named")
        #expect(world.queued.last?.properties == ["app": "store"])
    }

    @Test func e8_e6_defaultsTooLargeAreRefusedAndTheOldOnesStay() async throws {
        let world = RecordingStoresHarness()
        world.client.defaultProperties = ["app": "shop"]
        world.client.defaultProperties = ["big": .string(String(repeating: "x", count: 70_000))]
        #expect(world.client.defaultProperties == ["app": "shop"])
        #expect(world.harness.logger.entries.contains { $0.level == .error && $0.message.hasPrefix("Tracking: Default properties refused") })
        var configuration = world.harness.customConfiguration
        configuration.defaultProperties = ["big": .string(String(repeating: "x", count: 70_000))]
        #expect(throws: SegmentsError.self) { try world.client.configure(configuration) }
        #expect(!world.client.isConfigured)
    }

    @Test func e8_aConfigurationNamingNoDefaultsLetsCustomerUpdatesGetThoseSetOnTheClient() async throws {
        let world = RecordingStoresHarness()
        world.client.defaultProperties = ["app": "shop"]
        var configuration = SegmentsClient.Configuration(backend: world.harness.customConfiguration.backend)
        #expect(configuration.allowDefaultCustomerProperties, "true by default, as Exponea's allowDefaultCustomerProperties")
        configuration.flushingMode = .manual
        try world.client.configure(configuration)
        try world.client.identifyCustomer(customerIds: ["registered": "jane"], properties: ["plan": "gold"], timestamp: nil)
        #expect(world.queued.map(\.properties) == [["app": "shop", "plan": "gold"]])
    }

    @Test func e8_theInitNamingDefaultsKeepsThemAndWhetherCustomerUpdatesGetThem() async throws {
        let world = RecordingStoresHarness()
        let configuration = SegmentsClient.Configuration(
            backend: world.harness.customConfiguration.backend, flushingMode: .manual, defaultProperties: ["app": "shop"],
            allowDefaultCustomerProperties: false)
        #expect(configuration.defaultProperties == ["app": "shop"])
        #expect(configuration.allowDefaultCustomerProperties == false)
        try world.client.configure(configuration)
        try world.client.identifyCustomer(customerIds: ["registered": "jane"], properties: ["plan": "gold"], timestamp: nil)
        try world.client.trackEvent(properties: [:], timestamp: nil, eventType: "a")
        #expect(world.queued.map(\.properties) == [["plan": "gold"], ["app": "shop"]])
    }

    @Test func e8_x1_aFacadeConfigureWithoutAnExponeaConfigurationLetsCustomerUpdatesGetTheDefaults() async throws {
        let world = RecordingStoresHarness()
        let exponea = Exponea(client: world.client)
        exponea.flushingMode = .manual
        exponea.defaultProperties = ["app": "shop"]
        exponea.configure(Exponea.ProjectSettings(projectToken: "project", authorization: .token("key")))
        #expect(exponea.isConfigured)
        exponea.identifyCustomer(customerIds: ["registered": "jane"], properties: ["plan": "gold"], timestamp: nil)
        #expect(world.queued.map(\.properties) == [["app": "shop", "plan": "gold"]])
    }
}
