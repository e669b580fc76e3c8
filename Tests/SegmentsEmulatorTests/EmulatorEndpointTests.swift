import Foundation
import SegmentsEmulator
import SegmentsTesting
import Testing

/// The four the wire format (Behaviour) endpoints in project and stream mode, and what the emulator records of them.
@Suite(Hang.timeLimit(minutes: 2)) struct EmulatorEndpointTests {
    private let cookie = "5a6f3c1e-0b4e-4c1e-9d55-7f2b8c2d9e10"

    @Test func startGivesALoopbackBaseURLWithTheBoundPort() throws {
        let emulator = SegmentsEmulator()
        defer { emulator.stop() }
        #expect(emulator.baseURL == nil)
        let url = try emulator.start()
        #expect(url.absoluteString == "http://127.0.0.1:\(emulator.port ?? 0)")
        #expect(emulator.baseURL == url)
        #expect(try emulator.start() == url)  // already running: same URL
        #expect(emulator.isRunning)
    }

    @Test func projectModeServesAllFourEndpoints() async throws {
        try await withEmulator { emulator, client in
            let base = "/webxp/projects/tok-1"
            let track = "/track/v2/projects/tok-1"
            let fetch = try await client.get("\(base)/segments?cookie=\(cookie)")
            #expect(fetch.status == 200)
            #expect(fetch.json == [:])
            #expect(fetch.header("Content-Type") == "application/json")

            let link = try await client.post("\(base)/cookies/\(cookie)/link-ids", Body.link(["registered": "jane"]))
            #expect(link.status == 200)
            #expect(link.json == ["success": true])

            let event = try await client.post("\(track)/customers/events",
                                              Body.event("purchase", ids: ["cookie": cookie], properties: #"{"price": 9.5}"#))
            #expect(event.status == 200)
            let update = try await client.post("\(track)/customers",
                                               Body.customer(ids: ["cookie": cookie, "registered": "jane"],
                                                             properties: #"{"tier": "gold"}"#))
            #expect(update.status == 200)

            let integration = EmulatorIntegration.project(token: "tok-1")
            #expect(emulator.links.map(\.integration) == [integration])
            #expect(emulator.links.first?.cookie == cookie)
            #expect(emulator.links.first?.externalIds == ["registered": "jane"])
            let received = try #require(emulator.events.first)
            #expect(received.integration == integration)
            #expect(received.eventType == "purchase")
            #expect(received.customerIds == ["cookie": cookie])
            #expect(received.properties == ["price": 9.5])
            #expect(received.timestamp == 1_732_249_200.5)
            #expect(emulator.customerUpdates.first?.integration == integration)
            #expect(emulator.customer(cookie: cookie)?.properties == ["tier": "gold"])
            #expect(emulator.customer(cookie: cookie)?.linkedIds == [EmulatorExternalID(name: "registered", value: "jane")])
            #expect(emulator.requests.map(\.route) == [.fetch, .link, .event, .customer])
        }
    }

    @Test func streamModeServesAllFourEndpoints() async throws {
        try await withEmulator { emulator, client in
            let fetch = try await client.get("/webxp/streams/st-9/segments?cookie=\(cookie)")
            #expect(fetch.status == 200)
            let link = try await client.post("/webxp/streams/st-9/cookies/\(cookie)/link-ids", Body.link(["email": "a@b"]))
            #expect(link.status == 200)
            let event = try await client.post("/track/u/v1/customers/events?stream_id=st-9",
                                              Body.event("view", ids: ["cookie": cookie]))
            #expect(event.status == 200)
            let update = try await client.post("/track/u/v1/customers?stream_id=st-9", Body.customer(ids: ["cookie": cookie]))
            #expect(update.status == 200)

            let integration = EmulatorIntegration.stream(id: "st-9")
            #expect(emulator.links.map(\.integration) == [integration])
            #expect(emulator.events.map(\.integration) == [integration])
            #expect(emulator.customerUpdates.map(\.integration) == [integration])
            #expect(emulator.requests.map(\.route) == [.fetch, .link, .event, .customer])
        }
    }

    @Test func streamTrackingWithoutStreamIdIsABadRequest() async throws {
        try await withEmulator { emulator, client in
            let response = try await client.post("/track/u/v1/customers/events", Body.event("view", ids: ["cookie": "c"]))
            #expect(response.status == 400)
            let noCookie = try await client.get("/webxp/streams/s/segments")
            #expect(noCookie.status == 400)
            #expect(emulator.events.isEmpty)
        }
    }

    @Test func pathAndQueryComponentsArePercentDecoded() async throws {
        try await withEmulator { emulator, client in
            let response = try await client.post("/webxp/projects/t%2Fx%20y/cookies/c%3D1/link-ids",
                                                  Body.link(["registered": "a+b@c"]))
            #expect(response.status == 200)
            #expect(emulator.links.first?.integration == .project(token: "t/x y"))
            #expect(emulator.links.first?.cookie == "c=1")
            _ = try await client.post("/track/u/v1/customers/events?stream_id=s%26t%2B1",
                                      Body.event("e", ids: ["cookie": "c=1"]))
            #expect(emulator.events.first?.integration == .stream(id: "s&t+1"))
            let fetch = try await client.get("/webxp/projects/t/segments?cookie=c%3D1")
            #expect(fetch.status == 200)
            #expect(emulator.requests.last?.query == ["cookie": "c=1"])
            #expect(emulator.requests.last?.rawQuery == "cookie=c%3D1")
            #expect(emulator.requests.last?.pathComponents == ["webxp", "projects", "t", "segments"])
        }
    }

    @Test func unknownPathIs404AndWrongMethodIs405() async throws {
        try await withEmulator { emulator, client in
            #expect(try await client.get("/nope").status == 404)
            #expect(try await client.get("/webxp/projects/t/segments/extra?cookie=c").status == 404)
            let wrong = try await client.send("DELETE", "/webxp/projects/t/segments?cookie=c")
            #expect(wrong.status == 405)
            #expect(wrong.header("Allow") == "GET")
            #expect(try await client.get("/track/v2/projects/t/customers").status == 405)
            #expect(emulator.requests.map(\.route) == [nil, nil, nil, nil])
        }
    }

    @Test(arguments: [
        ("/track/v2/projects/t/customers/events", "not json"),
        ("/track/v2/projects/t/customers/events", #"[1, 2]"#),
        ("/track/v2/projects/t/customers/events", #"{"customer_ids": {"cookie": "c"}, "properties": {}}"#),
        ("/track/v2/projects/t/customers/events", #"{"customer_ids": {"cookie": 1}, "event_type": "x"}"#),
        ("/track/v2/projects/t/customers/events", #"{"customer_ids": {"cookie": "c"}, "event_type": "x", "properties": []}"#),
        ("/track/v2/projects/t/customers/events", #"{"customer_ids": {"cookie": "c"}, "event_type": "x", "timestamp": "now"}"#),
        ("/track/v2/projects/t/customers", #"{"properties": {}}"#),
        ("/webxp/projects/t/cookies/c/link-ids", #"{"ids": {}}"#),
        ("/webxp/projects/t/cookies/c/link-ids", #"{"external_ids": ["a"]}"#),
    ])
    func badBodiesAre400AndRecordNothing(path: String, body: String) async throws {
        try await withEmulator { emulator, client in
            let response = try await client.post(path, body)
            #expect(response.status == 400)
            #expect(response.json?["error"] != nil)
            #expect(emulator.events.isEmpty && emulator.links.isEmpty && emulator.customerUpdates.isEmpty)
            #expect(try await client.get("/webxp/projects/t/segments?cookie=c").status == 200)
        }
    }

    @Test func requestLogKeepsMethodPathQueryHeadersBodyAndTime() async throws {
        try await withEmulator { emulator, client in
            let before = Date()
            let body = Body.event("purchase", ids: ["cookie": cookie])
            _ = try await client.post("/track/v2/projects/t/customers/events", body,
                                      headers: ["Authorization": "Token k", "User-Agent": "test/1"])
            _ = try await client.get("/webxp/projects/t/segments?cookie=\(cookie)&x=1")
            let log = emulator.requests
            #expect(log.count == 2)
            #expect(log[0].method == "POST")
            #expect(log[0].path == "/track/v2/projects/t/customers/events")
            #expect(log[0].rawQuery == nil)
            #expect(log[0].header("authorization") == "Token k")
            #expect(log[0].header("Content-Type") == "application/json")
            #expect(log[0].body == Data(body.utf8))
            #expect(log[0].jsonBody?["event_type"] == "purchase")
            #expect(log[0].receivedAt >= before.addingTimeInterval(-1) && log[0].receivedAt <= Date())
            #expect(log[1].method == "GET")
            #expect(log[1].query == ["cookie": cookie, "x": "1"])
            #expect(log[1].body.isEmpty)
            #expect(emulator.requests(on: .fetch).count == 1)
            emulator.clearRequestLog()
            #expect(emulator.requests.isEmpty)
            #expect(emulator.events.count == 1)
        }
    }

    @Test func requestLogKeepsOnlyTheNewestRequestsBeyondItsLimit() async throws {
        try await withEmulator(limits: EmulatorLimits(maxLoggedRequests: 3)) { emulator, client in
            for index in 0..<7 { _ = try await client.get("/webxp/projects/t/segments?cookie=\(index)") }
            #expect(emulator.requests.map { $0.query["cookie"] } == ["4", "5", "6"])
        }
    }

    @Test func resetForgetsEverything() async throws {
        try await withEmulator { emulator, client in
            emulator.setRules([EmulatorSegmentRule(category: "c", segmentId: "s", segmentationId: "g", eventType: "e")])
            emulator.injectFault(.status(500), count: 3)
            emulator.requireAuthorization("Token k")
            _ = try await client.post("/track/v2/projects/t/customers/events", Body.event("e", ids: ["cookie": "c"]))
            emulator.reset()
            #expect(emulator.requests.isEmpty && emulator.events.isEmpty && emulator.customers.isEmpty)
            #expect(emulator.rules.isEmpty && emulator.pendingFaultCount == 0)
            #expect(try await client.get("/webxp/projects/t/segments?cookie=c").status == 200)
        }
    }
}
