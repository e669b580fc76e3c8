import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

/// Behaviour P7 (and P3, P4) for the values that become header fields or credentials: a control
/// character in a key, a token or the user agent, and a user name or password in a base URL, are
/// `.invalidConfiguration` before anything is sent, and the error never repeats the value.
@Suite(Hang.timeLimit(minutes: 1)) struct HeaderValueTests {
    static let secret = "SECRET-42"
    /// CR LF (header splitting), LF, NUL, TAB, DEL, NEL (C1) and the Unicode line separator.
    static let controls = ["\r\nX-Injected: 1", "\n", "\u{0}", "\t", "\u{7F}", "\u{85}", "\u{2028}"]

    private static func expectRefused(_ body: () throws -> Void) {
        let error = #expect(throws: SegmentsError.self) { try body() }
        #expect(error?.code == .invalidConfiguration)
        #expect(error.map { !$0.message.contains(secret) && !String(reflecting: $0).contains(secret) } ?? false)
    }

    @Test(arguments: controls)
    func p7_aControlCharacterInTheAPIKeyOrTokenIsRefused(control: String) {
        Self.expectRefused {
            try BloomreachConfiguration(integration: .project(token: "T"), authorization: .token(Self.secret + control)).validate()
        }
        Self.expectRefused {
            try BloomreachConfiguration(integration: .stream(id: "S"), authorization: .bearer(control + Self.secret)).validate()
        }
    }

    @Test(arguments: controls)
    func p7_aControlCharacterInTheUserAgentIsRefused(control: String) {
        Self.expectRefused {
            try BloomreachConfiguration(integration: .project(token: "T"), userAgent: "App/1.0" + control).validate()
        }
    }

    @Test(arguments: controls)
    func p7_aControlCharacterInTheODPKeyIsRefused(control: String) {
        Self.expectRefused { try ODPConfiguration(apiKey: Self.secret + control).validate() }
    }

    @Test func p7_theErrorNamesTheCharacterNeverTheValue() {
        let error = #expect(throws: SegmentsError.self) {
            try BloomreachConfiguration(integration: .project(token: "T"), authorization: .token(Self.secret + "\r\n")).validate()
        }
        #expect(error?.message == "The API key contains a control character (U+000D)")
    }

    @Test func p7_ordinaryValuesAreAccepted() throws {
        try BloomreachConfiguration(
            integration: .project(token: "T"), authorization: .token("abc DEF-123_~+/="), userAgent: "App/1.0 (iOS 17; ü)"
        ).validate()
        try ODPConfiguration(apiKey: "W4WzcEs-ABgXorzY7h1LCQ").validate()
    }

    @Test(arguments: [
        "https://user:\(secret)@api.example.com", "https://\(secret)@api.example.com", "https://:\(secret)@api.example.com",
        "http://user:\(secret)@127.0.0.1:8080",
    ])
    func p4_aBaseURLWithAUserOrPasswordIsRefusedWithoutRepeatingIt(url: String) {
        Self.expectRefused { try BloomreachConfiguration(integration: .project(token: "T"), baseURL: url).validate() }
        Self.expectRefused { try ODPConfiguration(apiKey: "K", apiHost: url).validate() }
    }

    @Test func p7_aProvidersTokenWithAControlCharacterIsNeverSent() async {
        let harness = Harness(Harness.project, authorization: .token("KEY"), provider: RecordingAuthorizationProvider("jwt\r\nX-Injected: 1"))
        let error = await segmentsError { _ = try await harness.repository.fetchSegments(for: anonymous) }
        #expect(error?.code == .unauthorized, "an unauthorized failure keeps queued events (E3)")
        #expect(error?.message.contains("jwt") == false)
        #expect(error?.message.hasSuffix("contains a control character (U+000D)") == true)
        #expect(harness.transport.requests.isEmpty)
    }
}
