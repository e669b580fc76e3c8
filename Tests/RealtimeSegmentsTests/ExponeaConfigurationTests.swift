import Foundation
import RealtimeSegments
import SegmentsTesting
import SegmentsDomain
import Testing

/// `Configuration`, the Exponea SDK's shape of what the facade was configured with (SPEC X1):
/// the same defaults, every value given kept as given, equality over every setting, and an empty
/// integration refused.
@Suite(Hang.timeLimit(minutes: 1)) struct ExponeaConfigurationTests {
    private static let project = Exponea.ProjectSettings(projectToken: "TOKEN", authorization: .none)

    /// Every setting left `nil` takes the Exponea SDK 4.x default.
    @Test func x1_aConfigurationWithNoSettingsHasTheExponeaDefaults() throws {
        let configuration = try Configuration(integrationConfig: Self.project)
        #expect(configuration.integrationId == "TOKEN")
        #expect(configuration.sessionTimeout == 60)
        #expect(configuration.automaticSessionTracking == true)
        #expect(configuration.automaticPushNotificationTracking == true)
        #expect(configuration.requirePushAuthorization == true)
        #expect(configuration.tokenTrackFrequency == .onTokenChange)
        #expect(configuration.flushEventMaxRetries == 10)
        #expect(configuration.allowDefaultCustomerProperties == true)
        #expect(configuration.advancedAuthEnabled == false)
        #expect(configuration.isDarkModeEnabled == nil)
        #expect(configuration.appInboxDetailImageInset == nil)
        #expect(configuration.manualSessionAutoClose == true)
        #expect(configuration.applicationID == "default-application")
        #expect(configuration.appGroup == nil)
        #expect(configuration.defaultProperties == nil)
        #expect(configuration.inAppContentBlocksPlaceholders == nil)
    }

    /// Every setting given is read back as given, none of them replaced by its default.
    @Test func x1_everySettingGivenIsKept() throws {
        let configuration = try Self.everySettingChanged()
        #expect(configuration.appGroup == "group.shop")
        #expect(configuration.defaultProperties?["channel"]?.jsonValue == .string("app"))
        #expect(configuration.inAppContentBlocksPlaceholders == ["banner"])
        #expect(configuration.sessionTimeout == 30)
        #expect(configuration.automaticSessionTracking == false)
        #expect(configuration.automaticPushNotificationTracking == false)
        #expect(configuration.requirePushAuthorization == false)
        #expect(configuration.tokenTrackFrequency == .daily)
        #expect(configuration.flushEventMaxRetries == 3)
        #expect(configuration.allowDefaultCustomerProperties == false)
        #expect(configuration.advancedAuthEnabled == true)
        #expect(configuration.isDarkModeEnabled == true)
        #expect(configuration.appInboxDetailImageInset == 8)
        #expect(configuration.manualSessionAutoClose == false)
        #expect(configuration.applicationID == "shop")
    }

    /// Two configurations are equal when every setting is, and unequal when any one differs.
    @Test func x1_configurationsDifferingInAnyOneSettingAreUnequal() throws {
        let base = try Configuration(integrationConfig: Self.project)
        #expect(base == (try Configuration(integrationConfig: Self.project)))
        let changed: [(String, Configuration)] = [
            ("integration", try Configuration(integrationConfig: Exponea.StreamSettings(streamId: "STREAM"))),
            ("defaultProperties", try Configuration(integrationConfig: Self.project, defaultProperties: ["channel": "app"])),
            ("inAppContentBlocksPlaceholders", try Configuration(integrationConfig: Self.project, inAppContentBlocksPlaceholders: ["b"])),
            ("sessionTimeout", try Configuration(integrationConfig: Self.project, sessionTimeout: 30)),
            ("automaticSessionTracking", try Configuration(integrationConfig: Self.project, automaticSessionTracking: false)),
            ("applicationID", try Configuration(integrationConfig: Self.project, applicationID: "shop")),
            ("automaticPushNotificationTracking", try Configuration(integrationConfig: Self.project, automaticPushNotificationTracking: false)),
            ("requirePushAuthorization", try Configuration(integrationConfig: Self.project, requirePushAuthorization: false)),
            ("tokenTrackFrequency", try Configuration(integrationConfig: Self.project, tokenTrackFrequency: .daily)),
            ("appGroup", try Configuration(integrationConfig: Self.project, appGroup: "group.shop")),
            ("flushEventMaxRetries", try Configuration(integrationConfig: Self.project, flushEventMaxRetries: 3)),
            ("allowDefaultCustomerProperties", try Configuration(integrationConfig: Self.project, allowDefaultCustomerProperties: false)),
            ("advancedAuthEnabled", try Configuration(integrationConfig: Self.project, advancedAuthEnabled: true)),
            ("isDarkModeEnabled", try Configuration(integrationConfig: Self.project, isDarkModeEnabled: true)),
            ("appInboxDetailImageInset", try Configuration(integrationConfig: Self.project, appInboxDetailImageInset: 8)),
            ("manualSessionAutoClose", try Configuration(integrationConfig: Self.project, manualSessionAutoClose: false)),
        ]
        for (setting, configuration) in changed {
            #expect(configuration != base, "differing only in \(setting)")
            #expect(configuration == configuration, "\(setting): equal to itself")
        }
        #expect((try Self.everySettingChanged()) == (try Self.everySettingChanged()))
    }

    /// An empty project token or stream id is `.invalidConfiguration`; any other is accepted.
    @Test func x1_p7_anEmptyIntegrationIdIsRefusedAndAnyOtherAccepted() throws {
        for empty in [Exponea.ProjectSettings(projectToken: "", authorization: .none) as any IntegrationType,
                      Exponea.StreamSettings(streamId: "")] {
            let error = #expect(throws: SegmentsError.self) { try Configuration(integrationConfig: empty) }
            #expect(error?.code == .invalidConfiguration)
        }
        #expect(try Configuration(integrationConfig: Exponea.StreamSettings(streamId: "S")).integrationId == "S")
        #expect(try Configuration(integrationConfig: Self.project).integrationId == "TOKEN")
    }

    private static func everySettingChanged() throws -> Configuration {
        try Configuration(
            integrationConfig: project, appGroup: "group.shop", defaultProperties: ["channel": "app"],
            inAppContentBlocksPlaceholders: ["banner"], sessionTimeout: 30, automaticSessionTracking: false,
            automaticPushNotificationTracking: false, requirePushAuthorization: false, tokenTrackFrequency: .daily,
            flushEventMaxRetries: 3, allowDefaultCustomerProperties: false, advancedAuthEnabled: true,
            isDarkModeEnabled: true, appInboxDetailImageInset: 8, manualSessionAutoClose: false, applicationID: "shop")
    }
}
