import Foundation
import SegmentsDomain
@testable import RealtimeSegments
import SegmentsTesting
import Testing

/// Behaviour P4: a credential never shows when a value holding it is printed, debug-printed, dumped or
/// walked with `Mirror` — the ways apps and crash reporters turn values into text.
@Suite(Hang.timeLimit(minutes: 2)) struct RedactionTests {
    static let secret = "SECRET-0123456789"

    /// Every text the value can be turned into: description, debug description, `dump`, and each
    /// child of a recursive `Mirror` walk printed both ways.
    static func renderings(of value: Any) -> [String] {
        var texts = [String(describing: value), String(reflecting: value)]
        var dumped = ""
        dump(value, to: &dumped)
        texts.append(dumped)
        func walk(_ value: Any, depth: Int) {
            guard depth < 10 else { return }
            for child in Mirror(reflecting: value).children {
                texts.append(String(describing: child.value))
                texts.append(String(reflecting: child.value))
                walk(child.value, depth: depth + 1)
            }
        }
        walk(value, depth: 0)
        return texts
    }

    static let headers: SegmentsHTTPHeaders = [
        "Authorization": "Token \(secret)", "Proxy-Authorization": "Basic \(secret)", "x-api-key": secret,
        "Cookie": "session=\(secret)", "Set-Cookie": "id=\(secret)", "Accept": "application/json",
    ]

    static let values: [(String, any Sendable)] = [
        ("Exponea.Authorization.token", Exponea.Authorization.token(secret)),
        ("Exponea.Authorization.bearer", Exponea.Authorization.bearer(secret)),
        ("ProjectSettings", Exponea.ProjectSettings(projectToken: "T", authorization: .token(secret))),
        ("BloomreachAuthorization", BloomreachAuthorization.token(secret)),
        ("BloomreachConfiguration", BloomreachConfiguration(integration: .project(token: "T"), authorization: .bearer(secret))),
        ("ODPConfiguration", ODPConfiguration(apiKey: secret)),
        (
            "Configuration.odp",
            SegmentsClient.Configuration(backend: .odp(ODPConfiguration(apiKey: secret), candidates: ["a"]))
        ),
        (
            "Configuration.bloomreach",
            SegmentsClient.Configuration(
                backend: .bloomreach(BloomreachConfiguration(integration: .stream(id: "S"), authorization: .token(secret))))
        ),
        (
            "ProjectSettings.authorizationProvider",
            Exponea.ProjectSettings(projectToken: "T", authorizationProvider: HeldToken(jwt: secret))
        ),
        ("StreamSettings.authorizationProvider", Exponea.StreamSettings(streamId: "S", authorizationProvider: HeldTokenActor())),
        (
            "BloomreachConfiguration.authorizationProvider",
            BloomreachConfiguration(integration: .project(token: "T"), authorizationProvider: HeldToken(jwt: secret))
        ),
        ("SegmentsHTTPHeaders", headers),
        ("SegmentsHTTPHeaders.Field", SegmentsHTTPHeaders.Field(name: "COOKIE", value: secret)),
        ("SegmentsHTTPRequest", SegmentsHTTPRequest(url: URL(string: "https://api.example.com/x")!, headers: headers)),
    ]

    @Test(arguments: values.map(\.0))
    func p4_noRenderingShowsTheCredential(name: String) throws {
        let value = try #require(Self.values.first { $0.0 == name }?.1)
        for text in Self.renderings(of: value) {
            #expect(!text.contains(Self.secret), "\(name) printed the secret: \(text)")
        }
    }

    @Test func p4_theRedactedFormsStillSayWhatKindItIs() {
        #expect("\(Exponea.Authorization.token(Self.secret))" == "token(<redacted>)")
        #expect(String(reflecting: BloomreachAuthorization.bearer(Self.secret)) == "bearer(<redacted>)")
        #expect(Self.headers.description.contains("Accept: application/json"))
        #expect(Self.headers.description.contains("Proxy-Authorization: <redacted>"))
        #expect(Self.headers["cookie"] == "session=\(Self.secret)", "the value itself is still there to send")
    }
}

/// An app's token provider keeping its JWT in a stored property (a value and an actor): what the
/// settings holding it print must not show it (see Behaviour P4).
struct HeldToken: BloomreachAuthorizationProvider {
    let jwt: String
    func token() async -> String? { jwt }
    func authorizationFailed() async {}
}

actor HeldTokenActor: BloomreachAuthorizationProvider {
    let jwt = RedactionTests.secret
    func token() async -> String? { jwt }
    func authorizationFailed() async {}
}

/// Behaviour P4 for storage: the default folder of an ODP integration does not carry its API key.
@Suite(Hang.timeLimit(minutes: 2)) struct StorageFolderSecretTests {
    @Test func p4_theODPStorageFolderIsNamedByAHashOfTheKey() {
        let key = "W4WzcEs-ABgXorzY7h1LCQ"
        let backend = SegmentsClient.Backend.odp(ODPConfiguration(apiKey: key), candidates: ["a"])
        #expect(!backend.storageIntegrationId.contains(key))
        #expect(!StorageLocation.defaultDirectory(integrationId: backend.storageIntegrationId).path.contains(key))
        #expect(backend.legacyStorageIntegrationId == "odp-\(key)", "the old folder is found to be renamed")
    }
}
