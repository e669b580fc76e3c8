import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// Behaviour M1–M3, the error classification, and JSON values.
@Suite(Hang.timeLimit(minutes: 2)) struct ModelTests {
    @Test func m1_encodingRoundTripsEveryField() throws {
        let segment = Segment(id: "a", segmentationId: "g", attributes: ["name": "VIP", "score": "3"])
        let decoded = try JSONDecoder().decode(Segment.self, from: JSONEncoder().encode(segment))
        #expect(decoded == segment)
    }

    @Test func m1_equalityCoversAttributes() {
        #expect(Segment(id: "a", segmentationId: "g") != Segment(id: "a", segmentationId: "g", attributes: ["x": "y"]))
    }

    @Test(arguments: [#"{"id":"a"}"#, #"{"segmentation_id":"g"}"#, #"{"id":"a","segmentation_id":"g","n":1}"#, "[]"])
    func m1_aSegmentMissingAnIdOrWithANonStringValueDoesNotDecode(json: String) {
        #expect(throws: (any Error).self) { try JSONDecoder().decode(Segment.self, from: Data(json.utf8)) }
    }

    @Test func m2_categoriesAreTheirWireNames() {
        #expect(SegmentCategory.discovery().name == "discovery")
        #expect(SegmentCategory.merchandising().name == "merchandising")
        #expect(SegmentCategory.content().name == "content")
        #expect(SegmentCategory("anything-new") == SegmentCategory("anything-new"))
    }

    @available(*, deprecated)
    @Test func m2_merchandiseIsADeprecatedAliasOfMerchandising() {
        #expect(SegmentCategory.merchandise() == .merchandising())
    }

    @Test func m3_customersAreEqualOnlyWithEqualIdMaps() {
        let a = CustomerIds(["cookie": "c", "registered": "r"])
        #expect(a == CustomerIds(["registered": "r", "cookie": "c"]))
        #expect(a != CustomerIds(cookie: "c"))
        #expect(a.hardIds == ["registered": "r"])
        #expect(CustomerIds(cookie: "c").hasHardIds == false)
    }

    @Test func e1_mergingAddsAndOverwritesHardIdsButNeverRemovesOrTouchesTheCookie() {
        let merged = CustomerIds(["cookie": "c", "registered": "r"]).merging(hardIds: ["email": "e", "cookie": "evil"])
        #expect(merged == CustomerIds(["cookie": "c", "registered": "r", "email": "e"]))
    }

    @Test func p4_keyDescriptionHoldsNoValues() {
        let customer = CustomerIds(["cookie": "c", "registered": "jane@example.com"])
        #expect(customer.keyDescription == "[cookie, registered]")
    }

    @Test(arguments: [
        (SegmentsError.Code.network, nil, true), (.timeout, nil, true), (.invalidResponse, nil, true),
        (.httpStatus, 408, true), (.httpStatus, 429, true), (.httpStatus, 500, true), (.httpStatus, 503, true),
        (.httpStatus, 400, false), (.httpStatus, 404, false), (.unauthorized, 401, false),
        (.stopped, nil, false), (.invalidConfiguration, nil, false),
        (.httpStatus, nil, false),  // an HTTP failure without its status is not known to be transient
    ] as [(SegmentsError.Code, Int?, Bool)])
    func t7_transientErrorsFollowTheWireRules(code: SegmentsError.Code, status: Int?, transient: Bool) {
        #expect(SegmentsError(code, "x", httpStatus: status).isTransient == transient)
    }

    @Test func t7_aLinkFailureIsAsTransientAsItsCause() {
        let transient = SegmentsError(.linkFailed, "x", underlying: SegmentsError(.httpStatus, "y", httpStatus: 502))
        let permanent = SegmentsError(.linkFailed, "x", underlying: SegmentsError(.httpStatus, "y", httpStatus: 400))
        #expect(transient.isTransient)
        #expect(!permanent.isTransient)
    }

    /// Only a classified cause (a ``SegmentsError``) can make a link failure transient: one with
    /// any other cause, or none, is permanent (a mutation of `?? false` to `?? true` survived).
    @Test func t7_aLinkFailureWithAnUnclassifiedCauseIsPermanent() {
        struct Unclassified: Error {}
        #expect(!SegmentsError(.linkFailed, "x", underlying: Unclassified()).isTransient)
        #expect(!SegmentsError(.linkFailed, "x", underlying: CancellationError()).isTransient)
        #expect(!SegmentsError(.linkFailed, "x").isTransient)
    }

    /// `wrapping` keeps a ``SegmentsError``, maps task cancellation to `.cancelled`, and gives any
    /// other error the code asked for (`.network` by default), never `.cancelled`.
    @Test func wrappingClassifiesCancellationAndNothingElseAsCancelled() {
        struct Refused: Error {}
        let network = SegmentsError.wrapping(Refused())
        #expect(network.code == .network)
        #expect(network.underlying is Refused)
        #expect(SegmentsError.wrapping(Refused(), as: .storage).code == .storage)
        let cancelled = SegmentsError.wrapping(CancellationError(), as: .storage)
        #expect(cancelled.code == .cancelled)
        #expect(cancelled.underlying is CancellationError)
        let kept = SegmentsError(.timeout, "slow", httpStatus: nil)
        #expect(SegmentsError.wrapping(kept, as: .storage).code == .timeout)
    }

    /// A category encodes as its bare wire name (M2), so stored files and wire bodies hold
    /// `"discovery"`, and decoding that gives the category back.
    @Test func m2_aCategoryEncodesAsItsBareWireName() throws {
        let categories: [SegmentCategory] = [.discovery(), .merchandising(), .content(), SegmentCategory("later")]
        let data = try JSONEncoder().encode(categories)
        #expect(String(decoding: data, as: UTF8.self) == #"["discovery","merchandising","content","later"]"#)
        #expect(try JSONDecoder().decode([SegmentCategory].self, from: data) == categories)
        let keyed = try JSONEncoder().encode(["c": SegmentCategory.content()])
        #expect(String(decoding: keyed, as: UTF8.self) == #"{"c":"content"}"#)
    }

    @Test func jsonValuesTakeSwiftLiteralsAndRoundTrip() throws {
        let properties: [String: JSONValue] = [
            "price": 9.99, "sku": "A-1", "count": 2, "gift": false, "tags": ["a", "b"], "meta": ["k": nil],
        ]
        let data = try JSONEncoder().encode(properties)
        #expect(try JSONDecoder().decode([String: JSONValue].self, from: data) == properties)
    }
}
