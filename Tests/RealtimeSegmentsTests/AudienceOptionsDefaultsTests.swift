import Foundation
import RealtimeSegments
import SegmentsTesting
import Testing

/// The audience client's cache defaults, live and for tests alike (see Behaviour O3): 100 users
/// for 600 s.
@Suite(Hang.timeLimit(minutes: 1)) struct AudienceOptionsDefaultsTests {
    @Test func o3_theLiveOptionsCacheAHundredUsersForTenMinutes() {
        let options = AudienceSegmentsClient.Options(transport: RecordingTransport())
        #expect(options.cacheCapacity == 100)
        #expect(options.cacheTimeout == 600)
    }

    @Test func o3_theTestingOptionsCacheAHundredUsersForTenMinutes() {
        let options = AudienceSegmentsClient.Options.testing()
        #expect(options.cacheCapacity == 100)
        #expect(options.cacheTimeout == 600)
    }
}
