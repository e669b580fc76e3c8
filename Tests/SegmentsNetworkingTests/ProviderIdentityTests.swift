import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

/// A provider of value type: it has no identity of its own.
private struct FixedTokens: BloomreachAuthorizationProvider {
    func token() async throws -> String? { "jwt-value-type" }
    func authorizationFailed() async {}
}

/// The settings hold an app's token provider by identity, never by what it holds (see Behaviour
/// P4): equal only to the same provider object, or to copies of one reference to a value provider.
@Suite(Hang.timeLimit(minutes: 1)) struct ProviderIdentityTests {
    @Test func p4_twoReferencesToOneProviderObjectAreEqualAndHashAlike() {
        let provider = RecordingAuthorizationProvider("jwt-1")
        let first = AuthorizationProviderReference(provider)
        let second = AuthorizationProviderReference(provider)
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        #expect(first != AuthorizationProviderReference(RecordingAuthorizationProvider("jwt-1")))
    }

    @Test func p4_aValueProviderIsEqualOnlyToCopiesOfItsReference() {
        let reference = AuthorizationProviderReference(FixedTokens())
        let copy = reference
        #expect(copy == reference)
        #expect(AuthorizationProviderReference(FixedTokens()) != reference)
    }

    /// Distinct providers spread over a set's buckets: their hashes differ (two fixed object
    /// identities colliding in Swift's 64-bit hash is a 2⁻⁶⁴ chance).
    @Test func p4_distinctProvidersHashApart() {
        let providers = (0..<8).map { _ in RecordingAuthorizationProvider() }
        let hashes = Set(providers.map { AuthorizationProviderReference($0).hashValue })
        #expect(hashes.count == providers.count)
    }
}
