import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

/// The initializer under its name from when the provider served streams only gives the same
/// defaults as the current one (see Behaviour P3, P7): https only, a 10 s deadline.
@Suite(Hang.timeLimit(minutes: 1)) struct DeprecatedConfigurationTests {
    @available(*, deprecated)
    @Test func p3_p7_theDeprecatedInitializerHasTheCurrentDefaults() {
        let provider = RecordingAuthorizationProvider("jwt-1")
        let old = BloomreachConfiguration(integration: .stream(id: "S"), streamAuthorization: provider)
        let current = BloomreachConfiguration(integration: .stream(id: "S"), authorizationProvider: provider)
        #expect(old.allowsInsecureHTTP == false)
        #expect(old.requestTimeout == 10)
        #expect(old.allowsInsecureHTTP == current.allowsInsecureHTTP)
        #expect(old.requestTimeout == current.requestTimeout)
        #expect(old.baseURL == current.baseURL)
        #expect(old.userAgent == current.userAgent)
        #expect(old.authorization == current.authorization)
        #expect(old.authorizationProvider as? RecordingAuthorizationProvider === provider)
    }
}
