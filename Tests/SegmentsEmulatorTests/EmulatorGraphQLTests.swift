import Foundation
import SegmentsEmulator
import SegmentsTesting
import Testing

/// `POST /v3/graphql`: the ODP audiences query (Behaviour, wire format, "ODP audiences query"), its key check, fixed and
/// rule-driven audiences, unknown users and GraphQL errors.
@Suite(Hang.timeLimit(minutes: 2)) struct EmulatorGraphQLTests {
    static let path = "/v3/graphql"

    static func query(field: String = "fs_user_id", userId: String, audiences: [String]? = ["seg-1", "seg-2"]) -> String {
        let text = "query($userId: String, $audiences: [String]) {customer(\(field): $userId) "
            + "{audiences(subset: $audiences) {edges {node {name state}}}}}"
        var variables: [String: EmulatorJSON] = ["userId": .string(userId)]
        if let audiences { variables["audiences"] = .array(audiences.map { .string($0) }) }
        let body: EmulatorJSON = ["query": .string(text), "variables": .object(variables)]
        return String(decoding: body.encodedData(), as: UTF8.self)
    }

    /// `[(name, state)]` of a success answer.
    static func nodes(_ response: ClientResponse) -> [[String]] {
        guard case .array(let edges)? = response.json?["data"]?["customer"]?["audiences"]?["edges"] else { return [] }
        return edges.compactMap { edge in
            guard case .string(let name)? = edge["node"]?["name"], case .string(let state)? = edge["node"]?["state"]
            else { return nil }
            return [name, state]
        }
    }

    @Test func o4_aKnownUserGetsEveryAskedAudienceWithItsStateInAskedOrder() async throws {
        try await withEmulator { (emulator, client) async throws in
            emulator.setQualifiedAudiences(["seg-2"], forUser: "user123")
            let response = try await client.post(Self.path, Self.query(userId: "user123", audiences: ["seg-2", "seg-1"]))
            #expect(response.status == 200)
            #expect(Self.nodes(response) == [["seg-2", "qualified"], ["seg-1", "not_qualified"]])
            #expect(emulator.requests(on: .graphql).count == 1)
        }
    }

    @Test func o4_withoutASubsetEveryKnownAudienceIsAnswered() async throws {
        try await withEmulator { (emulator, client) async throws in
            emulator.setQualifiedAudiences(["b"], forUser: "u")
            emulator.setAudienceRules([EmulatorAudienceRule(audience: "a", eventType: "purchase")])
            let response = try await client.post(Self.path, Self.query(userId: "u", audiences: nil))
            #expect(Self.nodes(response) == [["a", "not_qualified"], ["b", "qualified"]])
        }
    }

    @Test func o4_theApiKeyIsChecked() async throws {
        try await withEmulator { (emulator, client) async throws in
            emulator.setQualifiedAudiences([], forUser: "u")
            #expect(try await client.post(Self.path, Self.query(userId: "u")).status == 200, "any key by default")
            emulator.acceptODPAPIKeys(["KEY"])
            #expect(try await client.post(Self.path, Self.query(userId: "u")).status == 401)
            #expect(try await client.post(Self.path, Self.query(userId: "u"), headers: ["x-api-key": "OTHER"]).status == 401)
            #expect(try await client.post(Self.path, Self.query(userId: "u"), headers: ["x-api-key": "KEY"]).status == 200)
        }
    }

    @Test func o4_unknownUsersGetTheConfiguredAnswer() async throws {
        try await withEmulator { (emulator, client) async throws in
            let current = try await client.post(Self.path, Self.query(userId: "nobody"))
            #expect(current.status == 200)
            guard case .array(let errors)? = current.json?["errors"] else { Issue.record("no errors"); return }
            #expect(errors.first?["extensions"]?["code"] == "INVALID_IDENTIFIER_EXCEPTION")
            #expect(current.json?["data"]?["customer"] == .null)

            emulator.setUnknownUserAnswer(.legacyInvalidIdentifier)
            let legacy = try await client.post(Self.path, Self.query(userId: "nobody"))
            guard case .array(let legacyErrors)? = legacy.json?["errors"] else { Issue.record("no errors"); return }
            #expect(legacyErrors.first?["extensions"]?["classification"] == "InvalidIdentifierException")

            emulator.setUnknownUserAnswer(.nullCustomer)
            let null = try await client.post(Self.path, Self.query(userId: "nobody"))
            #expect(null.json == ["data": ["customer": nil]])
        }
    }

    @Test func o5_rulesQualifyUsersFromTrackedEventsByIdLinkOrVisitorCookie() async throws {
        try await withEmulator { (emulator, client) async throws in
            emulator.setAudienceRules([
                EmulatorAudienceRule(audience: "buyers", eventType: "purchase"),
                EmulatorAudienceRule(
                    audience: "shoe-fans", eventType: "view_item", minimumCount: 2,
                    property: .init(name: "category", equals: "shoes")),
            ])
            let track = "/track/v2/projects/p/customers/events"
            _ = try await client.post(track, Body.event("purchase", ids: ["cookie": "c1", "registered": "jane"]))
            _ = try await client.post(track, Body.event("view_item", ids: ["cookie": "c2"], properties: #"{"category": "shoes"}"#))
            _ = try await client.post(track, Body.event("view_item", ids: ["cookie": "c2"], properties: #"{"category": "hats"}"#))
            _ = try await client.post("/webxp/projects/p/cookies/c2/link-ids", Body.link(["registered": "joe"]))

            let audiences = ["buyers", "shoe-fans"]
            #expect(Self.nodes(try await client.post(Self.path, Self.query(userId: "jane", audiences: audiences)))
                == [["buyers", "qualified"], ["shoe-fans", "not_qualified"]])
            #expect(Self.nodes(try await client.post(Self.path, Self.query(field: "vuid", userId: "vuid_c1", audiences: audiences)))
                == [["buyers", "qualified"], ["shoe-fans", "not_qualified"]])
            #expect(Self.nodes(try await client.post(Self.path, Self.query(userId: "joe", audiences: audiences)))
                == [["buyers", "not_qualified"], ["shoe-fans", "qualified"]])
            #expect(emulator.qualifiedAudiences(forUser: "jane") == ["buyers"])
            #expect(emulator.qualifiedAudiences(forUser: "stranger") == nil)
        }
    }

    @Test func o4_anUnknownIdentifierFieldOrQueryShapeIsAValidationError() async throws {
        try await withEmulator { (emulator, client) async throws in
            emulator.setQualifiedAudiences([], forUser: "u")
            for body in [
                Self.query(field: "email", userId: "u"),
                #"{"query": "query { customer(fs_user_id: $userId) { id } }", "variables": {"userId": "u"}}"#,
                #"{"query": "\#(Self.queryText)", "variables": {}}"#,
                #"{"query": "\#(Self.queryText)", "variables": {"userId": "u", "audiences": "seg-1"}}"#,
            ] {
                let response = try await client.post(Self.path, body)
                #expect(response.status == 200)
                guard case .array(let errors)? = response.json?["errors"] else { Issue.record("no errors for \(body)"); continue }
                #expect(errors.first?["extensions"]?["classification"] == "ValidationError")
            }
        }
    }

    static let queryText =
        "query($userId: String, $audiences: [String]) {customer(fs_user_id: $userId) {audiences(subset: $audiences) {edges {node {name state}}}}}"

    @Test func o4_aBodyWithoutAQueryIs400AndGetIs405() async throws {
        try await withEmulator { (_, client) async throws in
            #expect(try await client.post(Self.path, "not json").status == 400)
            #expect(try await client.post(Self.path, #"{"variables": {}}"#).status == 400)
            let get = try await client.get(Self.path)
            #expect(get.status == 405)
            #expect(get.header("Allow") == "POST")
        }
    }

    @Test func o4_faultsCanBeAimedAtTheGraphQLRoute() async throws {
        try await withEmulator { (emulator, client) async throws in
            emulator.setQualifiedAudiences(["seg-1"], forUser: "u")
            emulator.injectFault(.status(503, retryAfter: "2"), on: .graphql)
            emulator.injectFault(.malformedJSON, on: .graphql)
            let unavailable = try await client.post(Self.path, Self.query(userId: "u"))
            #expect(unavailable.status == 503)
            #expect(unavailable.header("Retry-After") == "2")
            #expect(try await client.post(Self.path, Self.query(userId: "u")).json == nil)
            #expect(Self.nodes(try await client.post(Self.path, Self.query(userId: "u"))).first == ["seg-1", "qualified"])
        }
    }

    @Test func o4_resetForgetsAudiencesKeysAndRules() async throws {
        try await withEmulator { (emulator, client) async throws in
            emulator.setQualifiedAudiences(["seg-1"], forUser: "u")
            emulator.acceptODPAPIKeys(["KEY"])
            emulator.setAudienceRules([EmulatorAudienceRule(audience: "a", eventType: "x")])
            emulator.reset()
            #expect(emulator.audienceRules.isEmpty)
            #expect(emulator.qualifiedAudiences(forUser: "u") == nil)
            #expect(try await client.post(Self.path, Self.query(userId: "u")).status == 200)
        }
    }

    @Test func o4_audienceRulesHaveAJSONForm() throws {
        let json = #"{"audience": "buyers", "event_type": "purchase", "min_count": 2, "property": {"name": "c", "equals": 1}}"#
        let rule = try JSONDecoder().decode(EmulatorAudienceRule.self, from: Data(json.utf8))
        #expect(rule == EmulatorAudienceRule(audience: "buyers", eventType: "purchase", minimumCount: 2,
                                             property: .init(name: "c", equals: 1)))
        let minimal = try JSONDecoder().decode(EmulatorAudienceRule.self, from: Data(#"{"audience":"a","event_type":"e"}"#.utf8))
        #expect(minimal.minimumCount == 1 && minimal.property == nil)
        #expect(try JSONDecoder().decode(EmulatorAudienceRule.self, from: JSONEncoder().encode(rule)) == rule)
    }
}
