import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// The Exponea facade's defaults and its no-completion calls, over an injected client.
@Suite(Hang.timeLimit(minutes: 2)) struct ExponeaDefaultsTests {
    let harness = ClientHarness()
    var exponea: Exponea { Exponea(client: harness.client) }

    func configureProject(_ exponea: Exponea) {
        harness.transport.respond(to: "/webxp/projects/TOKEN/segments", with: .json(#"{"discovery":[{"id":"s1","segmentation_id":"g1"}]}"#))
        exponea.configure(
            Exponea.ProjectSettings(projectToken: "TOKEN", authorization: .token("SECRET-KEY"), baseUrl: "http://127.0.0.1:9"),
            flushingSetup: Exponea.FlushingSetup(mode: .manual))
    }

    func requests(_ suffix: String) -> Int {
        harness.transport.requests.filter { $0.url.path.hasSuffix(suffix) }.count
    }

    /// Without `force`, a read right after a fetch answers from the baseline (see Behaviour G1).
    @Test func g1_bothReadsOfTheFacadeDoNotForceAFetchByDefault() async throws {
        configureProject(exponea)
        let first = Recorder<[Segment]>()
        exponea.getSegments(force: true, category: .discovery()) { first.record($0) }
        await harness.advance()
        #expect(first.all == [[Fixture.s1]])
        let fetches = requests("/segments")
        #expect(fetches >= 1)

        let second = Recorder<[Segment]>()
        exponea.getSegments(category: .discovery()) { second.record($0) }
        await harness.advance()
        #expect(second.all == [[Fixture.s1]])
        let read = Task { [exponea] in try await exponea.getSegments(category: .discovery()) }
        await harness.advance()
        #expect(try await read.value == [Fixture.s1])
        #expect(requests("/segments") == fetches)
    }

    /// `flushData()` without a completion uploads what is queued (see Behaviour E5).
    @Test func e5_flushDataWithoutACompletionUploadsTheQueue() async throws {
        harness.transport.respond(to: "/track/v2/projects/TOKEN/customers/events", with: .json(#"{"success":true}"#))
        configureProject(exponea)
        exponea.trackEvent(properties: ["price": 9.99], timestamp: 1_700_000_000, eventType: "purchase")
        await harness.advance()
        #expect(requests("/customers/events") == 0)
        exponea.flushData()
        await harness.advance()
        #expect(requests("/customers/events") == 1)
    }

    /// The facade's whole-second periods (see Behaviour E2): a period under half a second reads as
    /// 1 s, and one beyond `Int`'s range as `Int.max`, never a trap.
    @Test(arguments: [(0.4, 1), (1.6, 2), (1e19, Int.max), (Double(Int.max), Int.max)])
    func e2_aPeriodReadsAsWholeSecondsOfAtLeastOne(seconds: Double, whole: Int) {
        harness.client.flushingMode = .periodic(seconds: seconds)
        #expect(exponea.flushingMode == .periodic(whole))
    }

    /// Stream settings default to https only and keep the provider they are given (see Behaviour P3, P4).
    @Test func p3_p4_streamSettingsRefusePlainHTTPByDefaultAndKeepTheirProvider() {
        let provider = RecordingAuthorizationProvider("jwt-1")
        let settings = Exponea.StreamSettings(streamId: "S", authorizationProvider: provider)
        #expect(settings.allowsInsecureHTTP == false)
        #expect(settings.authorizationProvider as? RecordingAuthorizationProvider === provider)
        #expect(Exponea.StreamSettings(streamId: "S").authorizationProvider == nil)
    }
}
