import SegmentsDomain
import SegmentsTesting
import Testing

/// The identifier type rule (Behaviour, wire format, "ODP audiences query") and the visitor segments value (see Behaviour V1, V2).
@Suite(Hang.timeLimit(minutes: 2)) struct AudienceModelTests {
    @Test(arguments: [
        ("vuid_123", "vuid"),
        ("VUID_abc", "vuid"),
        ("Vuid_", "vuid"),
        ("vuid", "fs_user_id"),
        ("vuid-123", "fs_user_id"),
        ("user123", "fs_user_id"),
        ("", "fs_user_id"),
        ("my_vuid_1", "fs_user_id"),
        ("vüid_1", "fs_user_id"),
    ])
    func o3_identifierTypeFollowsTheVuidPrefixRule(userId: String, field: String) {
        let identifier = AudienceIdentifier(userId: userId)
        #expect(identifier.field.rawValue == field)
        #expect(identifier.value == userId)
    }

    @Test func o3_identifiersOfOneValueButAnotherFieldAreDistinctKeys() {
        let visitor = AudienceIdentifier(field: .vuid, value: "x")
        let user = AudienceIdentifier(field: .fsUserId, value: "x")
        #expect(visitor != user)
        #expect(Set([visitor, user, AudienceIdentifier(field: .vuid, value: "x")]).count == 2)
    }

    @Test(arguments: [
        // (before, given, after, unknown keys)
        ([:], ["country": "US"], ["country": "US"], [String]()),
        (["country": "US", "browser": "safari"], ["browser": "chrome"], ["country": "US", "browser": "chrome"], []),
        ([:], ["country": "US", "devices": "mobile", "source": "organic", "campaign": "spring", "visitorType": "new",
               "browser": "safari"],
         ["country": "US", "devices": "mobile", "source": "organic", "campaign": "spring", "visitorType": "new",
          "browser": "safari"], []),
        (["country": "US"], ["plan": "gold", "Country": "DE"], ["country": "US"], ["Country", "plan"]),
        (["country": "US"], [:], ["country": "US"], []),
    ] as [([String: String], [String: String], [String: String], [String])])
    func v1_defaultSegmentsMergeOverTheSixKeys(
        before: [String: String], given: [String: String], after: [String: String], unknown: [String]
    ) {
        var segments = VisitorSegments()
        segments.mergeDefaultSegments(before)
        let ignored = segments.mergeDefaultSegments(given)
        #expect(segments.defaultSegments == after)
        #expect(ignored == unknown)
    }

    @Test(arguments: [
        // (present, given, after, added)
        ([String](), ["vip"], ["vip"], ["vip"]),
        (["vip"], ["vip", "beta"], ["vip", "beta"], ["beta"]),
        (["vip"], ["beta", "beta", "gamma", "vip"], ["vip", "beta", "gamma"], ["beta", "gamma"]),
        (["vip"], [], ["vip"], []),
    ])
    func v2_customSegmentsAppendSkippingIdsAlreadyPresent(
        present: [String], given: [String], after: [String], added: [String]
    ) {
        var segments = VisitorSegments(country: "US", customSegments: present)
        #expect(segments.appendCustomSegments(given) == added)
        #expect(segments.customSegments == after)
        #expect(segments.country == "US")
    }

    @Test func v1_keysSubscriptCoversEveryDimension() {
        var segments = VisitorSegments()
        for key in VisitorSegments.Key.allCases { segments[key] = key.rawValue.uppercased() }
        #expect(segments.defaultSegments.count == 6)
        #expect(segments.visitorType == "VISITORTYPE")
        #expect(VisitorSegments.Key.allCases.map(\.rawValue)
            == ["country", "browser", "devices", "source", "campaign", "visitorType"])
    }
}
