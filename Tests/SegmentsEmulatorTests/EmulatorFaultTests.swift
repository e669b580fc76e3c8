import Foundation
import SegmentsEmulator
import SegmentsTesting
import Testing

/// Every fault kind, observed through URLSession and/or a raw socket, and the queue semantics.
@Suite(Hang.timeLimit(minutes: 2), .onDedicatedThread) struct EmulatorFaultTests {
    private let fetchPath = "/webxp/projects/t/segments?cookie=c"

    private func expectHealthy(_ client: EmulatorTestClient) async throws {
        #expect(try await client.get(fetchPath).status == 200)
    }

    @Test func statusFaultAnswersWithRetryAfterForTheNextNRequests() async throws {
        try await withEmulator { emulator, client in
            emulator.injectFault(.status(503, retryAfter: "2"), on: .fetch, count: 2)
            #expect(emulator.pendingFaultCount == 2)
            for _ in 0..<2 {
                let response = try await client.get(fetchPath)
                #expect(response.status == 503)
                #expect(response.header("Retry-After") == "2")
                #expect(response.json?["error"] != nil)
            }
            #expect(emulator.pendingFaultCount == 0)
            try await expectHealthy(client)
        }
    }

    @Test func statusFaultRejectsTheRequestUnprocessed() async throws {
        try await withEmulator { emulator, client in
            emulator.injectFault(.status(429, retryAfter: "Wed, 21 Oct 2015 07:28:00 GMT"), on: .event)
            let path = "/track/v2/projects/t/customers/events"
            let rejected = try await client.post(path, Body.event("e", ids: ["cookie": "c"]))
            #expect(rejected.status == 429)
            #expect(rejected.header("Retry-After") == "Wed, 21 Oct 2015 07:28:00 GMT")
            #expect(emulator.events.isEmpty)
            #expect(try await client.post(path, Body.event("e", ids: ["cookie": "c"])).status == 200)
            #expect(emulator.events.count == 1)
        }
    }

    @Test func faultsAreAimedByRouteAndConsumedInFIFOOrder() async throws {
        try await withEmulator { emulator, client in
            emulator.injectFault(.status(500), on: .link)
            emulator.injectFault(.status(502), on: .any)
            emulator.injectFault(.status(504), on: .fetch)
            // The fetch skips the link fault and takes the oldest one that applies: `.any`.
            #expect(try await client.get(fetchPath).status == 502)
            #expect(try await client.get(fetchPath).status == 504)
            #expect(try await client.get(fetchPath).status == 200)
            #expect(try await client.post("/webxp/projects/t/cookies/c/link-ids", Body.link(["a": "b"])).status == 500)
            emulator.injectFault(.status(500), count: 5)
            emulator.clearFaults()
            try await expectHealthy(client)
            // Unknown paths never consume faults.
            emulator.injectFault(.status(500))
            #expect(try await client.get("/elsewhere").status == 404)
            #expect(emulator.pendingFaultCount == 1)
        }
    }

    @Test func delayFaultHoldsTheAnswer() async throws {
        try await withEmulator { emulator, client in
            emulator.injectFault(.delay(0.3), on: .fetch)
            let start = Date()
            #expect(try await client.get(fetchPath).status == 200)
            #expect(Date().timeIntervalSince(start) >= 0.29)
            #expect(emulator.pendingFaultCount == 0)  // one play only: the next answer is not held
            try await expectHealthy(client)
        }
    }

    @Test func dropConnectionClosesWithoutAByte() async throws {
        try await withEmulator { emulator, client in
            emulator.injectFault(.dropConnection, on: .fetch)
            let raw = try RawConnection(port: emulator.port!)
            raw.send(rawRequest("GET", fetchPath))
            #expect(raw.readUntilClosed() == .closed(received: []))

            // Count 2 then clear: a URL loading system may retry a dropped GET once by itself.
            emulator.injectFault(.dropConnection, on: .fetch, count: 2)
            await #expect(throws: (any Error).self) { try await client.get(fetchPath) }
            emulator.clearFaults()
            try await expectHealthy(client)
        }
    }

    @Test func dropMidBodySendsPartOfTheAnswerThenResets() async throws {
        try await withEmulator { emulator, client in
            emulator.setFixedSegments(["discovery": (0..<50).map { EmulatorSegment(id: "s\($0)", segmentationId: "g") }],
                                      forCookie: "c")
            let full = try await client.get(fetchPath).body.count
            emulator.injectFault(.dropMidBody, on: .fetch)
            let raw = try RawConnection(port: emulator.port!)
            raw.send(rawRequest("GET", fetchPath))
            switch raw.readUntilClosed() {
            case .reset(let received), .closed(let received):
                // The reset may destroy bytes still in flight, but never delivers the whole answer.
                #expect(received.count < full)
            case .response, .timedOut:
                Issue.record("expected a reset connection")
            }
            // A fresh session, count 2, then clear: a client may silently retry a GET once.
            emulator.injectFault(.dropMidBody, on: .fetch, count: 2)
            let fresh = EmulatorTestClient(baseURL: client.baseURL)
            await #expect(throws: (any Error).self) { try await fresh.get(fetchPath) }
            emulator.clearFaults()
            try await expectHealthy(client)
        }
    }

    @Test func truncatedBodyPromisesMoreThanItSends() async throws {
        try await withEmulator { emulator, client in
            emulator.setFixedSegments(["discovery": [EmulatorSegment(id: "a", segmentationId: "b")]], forCookie: "c")
            emulator.injectFault(.truncatedBody, on: .fetch)
            let raw = try RawConnection(port: emulator.port!)
            raw.send(rawRequest("GET", fetchPath))
            guard case .closed(let received) = raw.readUntilClosed() else {
                Issue.record("expected an orderly close")
                return
            }
            let text = String(decoding: received, as: UTF8.self)
            let parts = text.components(separatedBy: "\r\n\r\n")
            #expect(parts.count == 2)
            #expect(parts[0].hasPrefix("HTTP/1.1 200 OK"))
            let promised = parts[0].components(separatedBy: "\r\n")
                .first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }
            #expect(promised == #"{"discovery":[{"id":"a","segmentation_id":"b"}]}"#.utf8.count)
            #expect(parts[1].utf8.count == (promised ?? 0) / 2)

            emulator.injectFault(.truncatedBody, on: .event)
            await #expect(throws: (any Error).self) {
                try await client.post("/track/v2/projects/t/customers/events", Body.event("e", ids: ["cookie": "c"]))
            }
            // The request was processed; only its answer was cut.
            #expect(emulator.events.count == 1)
            try await expectHealthy(client)
        }
    }

    @Test func malformedJSONAndWrongShapeAnswer200() async throws {
        try await withEmulator { emulator, client in
            emulator.injectFault(.malformedJSON, on: .fetch)
            emulator.injectFault(.wrongShape, on: .fetch)
            let malformed = try await client.get(fetchPath)
            #expect(malformed.status == 200)
            #expect(!malformed.body.isEmpty)
            #expect((try? JSONSerialization.jsonObject(with: malformed.body)) == nil)
            let wrong = try await client.get(fetchPath)
            #expect(wrong.status == 200)
            guard case .array? = wrong.json else {
                Issue.record("expected a JSON array, got \(String(decoding: wrong.body, as: UTF8.self))")
                return
            }
            #expect(try await client.get(fetchPath).json == [:])
        }
    }

    @Test func oversizedBodyHasExactlyTheRequestedSize() async throws {
        try await withEmulator { emulator, client in
            emulator.injectFault(.oversizedBody(bytes: 3_000_000), on: .fetch)
            let response = try await client.get(fetchPath)
            #expect(response.status == 200)
            #expect(response.body.count == 3_000_000)
            #expect(response.json != nil)  // a (huge) JSON string, but not the expected object
            try await expectHealthy(client)
        }
    }

    @Test func stopCutsAFaultDelayShort() async throws {
        let emulator = SegmentsEmulator()
        defer { emulator.stop() }
        try emulator.start()
        emulator.injectFault(.delay(30), on: .fetch)
        let raw = try RawConnection(port: emulator.port!)
        raw.send(rawRequest("GET", fetchPath))
        let deadline = Date(timeIntervalSinceNow: 30)
        while emulator.requests.isEmpty && Date() < deadline { await Task.yield() }
        #expect(emulator.requests.count == 1)
        let start = Date()
        emulator.stop()
        #expect(Date().timeIntervalSince(start) < 15)  // far below the 30 s delay, loose under load
        #expect(raw.readUntilClosed() == .closed(received: []))
    }
}
