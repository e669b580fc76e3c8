import SegmentsDomain
import SegmentsTesting
import Testing

/// The visitor segments value keeps every dimension it is created with (see Behaviour V1).
@Suite(Hang.timeLimit(minutes: 1)) struct VisitorSegmentsInitializerTests {
    @Test func v1_theInitializerKeepsEachOfTheSixDimensionsAndTheCustomSegments() {
        let segments = VisitorSegments(
            country: "US", browser: "safari", devices: "mobile", source: "organic", campaign: "spring",
            visitorType: "returning", customSegments: ["vip"])
        #expect(segments.defaultSegments == [
            "country": "US", "browser": "safari", "devices": "mobile", "source": "organic",
            "campaign": "spring", "visitorType": "returning",
        ])
        #expect(segments.customSegments == ["vip"])
    }
}
