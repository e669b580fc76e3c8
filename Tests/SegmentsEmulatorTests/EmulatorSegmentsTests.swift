import Foundation
import SegmentsEmulator
import SegmentsTesting
import Testing

/// Fetch answers: rules over received events, fixed answers, and the rules file format.
@Suite(Hang.timeLimit(minutes: 2)) struct EmulatorSegmentsTests {
    private let buyers = EmulatorSegmentRule(category: "discovery", segmentId: "buyers", segmentationId: "g1",
                                             eventType: "purchase", minimumCount: 2)
    private let shoes = EmulatorSegmentRule(category: "merchandising", segmentId: "shoes", segmentationId: "g2",
                                            attributes: ["name": "Shoe fans"], eventType: "purchase",
                                            property: .init(name: "category", equals: "shoes"))
    private let events = "/track/v2/projects/t/customers/events"

    private func fetch(_ client: EmulatorTestClient, _ cookie: String, stream: Bool = false) async throws -> EmulatorJSON? {
        let path = stream ? "/webxp/streams/s/segments?cookie=\(cookie)" : "/webxp/projects/t/segments?cookie=\(cookie)"
        let response = try await client.get(path)
        #expect(response.status == 200)
        return response.json
    }

    @Test func trackingEventsChangesTheFetchedSegments() async throws {
        try await withEmulator { emulator, client in
            emulator.setRules([buyers, shoes])
            #expect(try await fetch(client, "c1") == ["discovery": [], "merchandising": []])

            _ = try await client.post(events, Body.event("purchase", ids: ["cookie": "c1"], properties: #"{"category": "hats"}"#))
            #expect(try await fetch(client, "c1") == ["discovery": [], "merchandising": []])

            _ = try await client.post(events, Body.event("purchase", ids: ["cookie": "c1"], properties: #"{"category": "shoes"}"#))
            #expect(try await fetch(client, "c1") == [
                "discovery": [["id": "buyers", "segmentation_id": "g1"]],
                "merchandising": [["id": "shoes", "segmentation_id": "g2", "name": "Shoe fans"]],
            ])
            // Another customer is unaffected, and stream mode answers from the same state.
            #expect(try await fetch(client, "c2", stream: true) == ["discovery": [], "merchandising": []])
            #expect(try await fetch(client, "c1", stream: true)?["discovery"] == [["id": "buyers", "segmentation_id": "g1"]])
        }
    }

    @Test func eventsTrackedWithALinkedHardIdCountForTheCookie() async throws {
        try await withEmulator { emulator, client in
            emulator.setRules([buyers])
            // Tracked under the hard id only, before anything links it to the cookie.
            _ = try await client.post(events, Body.event("purchase", ids: ["registered": "jane"]))
            _ = try await client.post(events, Body.event("purchase", ids: ["registered": "jane"]))
            #expect(try await fetch(client, "c1") == ["discovery": []])

            _ = try await client.post("/webxp/projects/t/cookies/c1/link-ids", Body.link(["registered": "jane"]))
            #expect(try await fetch(client, "c1") == ["discovery": [["id": "buyers", "segmentation_id": "g1"]]])
            #expect(emulator.events(forCookie: "c1").count == 2)
        }
    }

    @Test func customerIdsInTrackingBodiesLinkHardIdsToTheCookie() async throws {
        try await withEmulator { emulator, client in
            emulator.setRules([buyers])
            _ = try await client.post("/track/u/v1/customers?stream_id=s",
                                      Body.customer(ids: ["cookie": "c1", "registered": "jane"]))
            _ = try await client.post(events, Body.event("purchase", ids: ["registered": "jane"]))
            _ = try await client.post(events, Body.event("purchase", ids: ["cookie": "other", "registered": "jane"]))
            #expect(try await fetch(client, "c1") == ["discovery": [["id": "buyers", "segmentation_id": "g1"]]])
            #expect(emulator.customers.map(\.cookie) == ["c1", "other"])
        }
    }

    @Test func propertyMatchUsesJSONEquality() {
        let rule = EmulatorSegmentRule(category: "c", segmentId: "s", segmentationId: "g", eventType: "e",
                                       property: .init(name: "n", equals: 1))
        func event(_ properties: [String: EmulatorJSON], type: String = "e") -> EmulatorEvent {
            EmulatorEvent(integration: .project(token: "t"), eventType: type, customerIds: [:],
                                 properties: properties, timestamp: nil, receivedAt: Date())
        }
        #expect(rule.matches([event(["n": 1.0])]))
        #expect(!rule.matches([event(["n": "1"])]))
        #expect(!rule.matches([event(["n": 1], type: "other")]))
        #expect(!rule.matches([event([:])]))
    }

    @Test func fixedAnswersTakePrecedenceUntilCleared() async throws {
        try await withEmulator { emulator, client in
            emulator.setRules([buyers])
            emulator.setFixedSegments(["content": [EmulatorSegment(id: "a", segmentationId: "b", attributes: ["k": "v"])],
                                       "discovery": []], forCookie: "c1")
            let fixed = try await fetch(client, "c1")
            #expect(fixed == ["content": [["id": "a", "segmentation_id": "b", "k": "v"]], "discovery": []])
            let other = try await fetch(client, "c2")
            #expect(other == ["discovery": []])
            emulator.clearFixedSegments(forCookie: "c1")
            let cleared = try await fetch(client, "c1")
            #expect(cleared == ["discovery": []])
            emulator.setFixedSegments([:], forCookie: "c3")
            let empty = try await fetch(client, "c3")
            #expect(empty == [:])
            emulator.clearAllFixedSegments()
            #expect(emulator.segments(forCookie: "c3") == ["discovery": []])
        }
    }

    @Test func rulesLoadFromTheDocumentedJSONForm() throws {
        let document = """
        {"rules": [
          {"category": "discovery", "segment_id": "s1", "segmentation_id": "g1", "event_type": "purchase",
           "min_count": 2, "property": {"name": "category", "equals": "shoes"}, "attributes": {"name": "Shoes"}},
          {"category": "content", "segment_id": "s2", "segmentation_id": "g2", "event_type": "view"}
        ]}
        """
        let ruleSet = try EmulatorRuleSet(jsonData: Data(document.utf8))
        #expect(ruleSet.rules == [
            EmulatorSegmentRule(category: "discovery", segmentId: "s1", segmentationId: "g1", attributes: ["name": "Shoes"],
                                eventType: "purchase", minimumCount: 2, property: .init(name: "category", equals: "shoes")),
            EmulatorSegmentRule(category: "content", segmentId: "s2", segmentationId: "g2", eventType: "view"),
        ])
        // Round trip through the written form, and a bare array is accepted too.
        #expect(try EmulatorRuleSet(jsonData: ruleSet.jsonData()) == ruleSet)
        let array = #"[{"category": "c", "segment_id": "s", "segmentation_id": "g", "event_type": "e"}]"#
        #expect(try EmulatorRuleSet(jsonData: Data(array.utf8)).rules.count == 1)
        #expect(throws: (any Error).self) { try EmulatorRuleSet(jsonData: Data(#"{"rules": [{"category": 1}]}"#.utf8)) }

        let emulator = SegmentsEmulator()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("rules-\(UUID().uuidString).json")
        try Data(document.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try emulator.loadRules(contentsOf: file)
        #expect(emulator.rules == ruleSet.rules)
        #expect(throws: (any Error).self) { try emulator.loadRules(from: Data("nope".utf8)) }
        #expect(emulator.rules == ruleSet.rules)
    }
}
