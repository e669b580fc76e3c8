import Foundation
import SegmentsEmulator
import SegmentsTesting
import Testing

@Suite(Hang.timeLimit(minutes: 2)) struct EmulatorAuthorizationTests {
    @Test func projectModeRequiresTheExactAuthorizationValue() async throws {
        try await withEmulator { emulator, client in
            emulator.requireAuthorization("Token KEY")
            let path = "/webxp/projects/t/segments?cookie=c"
            #expect(try await client.get(path).status == 401)
            #expect(try await client.get(path, headers: ["Authorization": "Token WRONG"]).status == 401)
            #expect(try await client.get(path, headers: ["Authorization": "Bearer KEY"]).status == 401)
            #expect(try await client.get(path, headers: ["Authorization": "Token KEY"]).status == 200)
            let event = try await client.post("/track/v2/projects/t/customers/events", Body.event("e", ids: ["cookie": "c"]))
            #expect(event.status == 401)
            #expect(emulator.events.isEmpty)
            // Stream mode is governed by the bearer set, which is unset here.
            #expect(try await client.get("/webxp/streams/s/segments?cookie=c").status == 200)
            emulator.requireAuthorization(nil)
            #expect(try await client.get(path).status == 200)
        }
    }

    @Test func streamModeAcceptsOnlyKnownBearerTokens() async throws {
        try await withEmulator { emulator, client in
            emulator.acceptBearerTokens(["jwt-1", "jwt-2"])
            let path = "/track/u/v1/customers/events?stream_id=s"
            let body = Body.event("e", ids: ["cookie": "c"])
            #expect(try await client.post(path, body).status == 401)
            #expect(try await client.post(path, body, headers: ["Authorization": "Bearer jwt-3"]).status == 401)
            #expect(try await client.post(path, body, headers: ["Authorization": "Token jwt-1"]).status == 401)
            #expect(try await client.post(path, body, headers: ["Authorization": "Bearer jwt-2"]).status == 200)
            #expect(emulator.events.count == 1)
            let link = try await client.post("/webxp/streams/s/cookies/c/link-ids", Body.link(["a": "b"]),
                                             headers: ["Authorization": "Bearer jwt-1"])
            #expect(link.status == 200)
            // Project mode is governed by requireAuthorization, which is unset here.
            #expect(try await client.get("/webxp/projects/t/segments?cookie=c").status == 200)
            // Every rejected request is still logged.
            #expect(emulator.requests.count == 6)
        }
    }
}
