import Foundation
import RealtimeSegments
import SegmentsDomain
import SegmentsTesting
import Testing

/// The Exponea SDK's configure settings (SPEC X1): `AutomaticSessionTracking.enabled()` is the
/// Exponea SDK's default, with its 60 s time-out; `.disabled` push and session tracking ask for
/// nothing, so configure names neither in its warning, and `.enabled(…)` push does; and
/// `IntegrationSourceType.isStream` tells a stream from a project.
@Suite(Hang.timeLimit(minutes: 1)) struct ExponeaConfigureSettingsTests {
    private static let project = Exponea.ProjectSettings(projectToken: "project", authorization: .token("key"))
    private static let ignoredPrefix = "Segments: configure ignored parameters of features outside this SDK: "

    private static func ignoredLines(_ harness: ClientHarness) -> [String] {
        harness.logger.entries.filter { $0.level == .warning && $0.message.hasPrefix(ignoredPrefix) }.map(\.message)
    }

    @Test func x1_sessionTrackingByDefaultIsEnabledWithTheExponeaSixtySecondTimeout() throws {
        #expect(Exponea.AutomaticSessionTracking.enabled() == .enabled(timeout: 60))
        #expect(Exponea.AutomaticSessionTracking.enabled() != .disabled, "enabled, unlike .disabled (also 60 s)")
        let harness = ClientHarness()
        defer { harness.client.stop() }
        let exponea = Exponea(client: harness.client)
        exponea.configure(Self.project, pushNotificationTracking: .disabled)
        let configuration = try #require(exponea.configuration)
        #expect(configuration.sessionTimeout == 60)
        #expect(configuration.automaticSessionTracking == true)
        #expect(Self.ignoredLines(harness) == [Self.ignoredPrefix + "automaticSessionTracking"])
    }

    @Test func x1_disabledPushAndSessionTrackingAreNotNamedInTheWarning() throws {
        let harness = ClientHarness()
        defer { harness.client.stop() }
        let exponea = Exponea(client: harness.client)
        exponea.configure(Self.project, pushNotificationTracking: .disabled, automaticSessionTracking: .disabled)
        #expect(exponea.isConfigured)
        #expect(Self.ignoredLines(harness).isEmpty)
        #expect(exponea.configuration?.automaticSessionTracking == false)
    }

    @Test func x1_enabledPushTrackingIsNamedInTheWarningAndItsAppGroupKept() throws {
        let harness = ClientHarness()
        defer { harness.client.stop() }
        let exponea = Exponea(client: harness.client)
        exponea.configure(
            Self.project, pushNotificationTracking: .enabled(appGroup: "group.shop"), automaticSessionTracking: .disabled)
        #expect(Self.ignoredLines(harness) == [Self.ignoredPrefix + "pushNotificationTracking"])
        #expect(exponea.configuration?.appGroup == "group.shop")
    }

    @Test func x1_isStreamTellsAStreamFromAProject() {
        #expect(IntegrationSourceType.stream(streamId: "stream-1").isStream)
        #expect(!IntegrationSourceType.project(projectToken: "project").isStream)
        #expect(!Self.project.type.isStream)
    }

    @Test func x1_p3_aRefusedReconfigureKeepsTheConfigurationAppliedLast() throws {
        let harness = ClientHarness()
        defer { harness.client.stop() }
        let exponea = Exponea(client: harness.client)
        exponea.configure(Exponea.ProjectSettings(projectToken: "first", authorization: .token("key")))
        #expect(exponea.configuration?.integrationId == "first")
        exponea.configure(
            Exponea.ProjectSettings(projectToken: "second", authorization: .token("key"), baseUrl: "http://example.com"))
        #expect(harness.logger.entries.contains { $0.level == .error && $0.message.hasPrefix("Segments: Configuration refused") })
        #expect(exponea.isConfigured)
        #expect(exponea.configuration?.integrationId == "first", "a refused configure records nothing")
    }
}
