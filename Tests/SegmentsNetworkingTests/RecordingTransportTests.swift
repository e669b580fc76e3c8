import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

@Suite(Hang.timeLimit(minutes: 2)) struct RecordingTransportTests {
    private func request(_ path: String, _ method: SegmentsHTTPRequest.Method = .get) -> SegmentsHTTPRequest {
        SegmentsHTTPRequest(method: method, url: URL(string: "https://h.example" + path)!)
    }

    @Test func unscriptedRequestsGetA404ByDefault() async throws {
        let transport = RecordingTransport()
        #expect(try await transport.send(request("/x")).status == 404)
    }

    @Test func queuedAnswersGoFirstThenTheStandingOneThenTheFallback() async throws {
        let transport = RecordingTransport(fallback: .status(418))
        transport.enqueue(.status(503), for: "/p")
        transport.enqueue(.status(502), for: "/p")
        transport.respond(to: "/p", with: .json("{}"))
        var statuses: [Int] = []
        for _ in 0..<4 { statuses.append(try await transport.send(request("/p")).status) }
        #expect(statuses == [503, 502, 200, 200])
        #expect(try await transport.send(request("/other")).status == 418)
    }

    @Test func queuedAnswersWithoutAStandingOneFallBack() async throws {
        let transport = RecordingTransport()
        transport.enqueue(.status(500), for: "/p")
        #expect(try await transport.send(request("/p")).status == 500)
        #expect(try await transport.send(request("/p")).status == 404)
    }

    @Test func failuresAreThrown() async {
        let transport = RecordingTransport(fallback: .failure(SegmentsError(.network, "offline")))
        let error = await segmentsError { _ = try await transport.send(request("/p")) }
        #expect(error?.code == .network)
        #expect(transport.requests.count == 1)
    }

    @Test func handlerAnswersWhatIsNotScripted() async throws {
        let transport = RecordingTransport { request in
            SegmentsHTTPResponse(status: 200, text: request.path)
        }
        transport.respond(to: "/scripted", with: .status(204))
        #expect(try await transport.send(request("/scripted")).status == 204)
        #expect(try await transport.send(request("/echo")).body == Data("/echo".utf8))
    }

    @Test func pathsMatchEncodedOrDecoded() async throws {
        let transport = RecordingTransport()
        transport.respond(to: "/a%2Fb/c", with: .status(201))
        transport.respond(to: "/x y", with: .status(202))
        #expect(try await transport.send(request("/a%2Fb/c")).status == 201)
        #expect(try await transport.send(request("/x%20y")).status == 202)
        #expect(transport.requests(to: "/a%2Fb/c").count == 1)
        #expect(transport.requests(to: "/x y").count == 1)
    }

    @Test func recordsEveryRequestInOrderAndCanForgetThem() async throws {
        let transport = RecordingTransport()
        _ = try await transport.send(request("/1"))
        _ = try await transport.send(request("/2", .post))
        #expect(transport.requests.map(\.path) == ["/1", "/2"])
        #expect(transport.requests.map(\.method) == [.get, .post])
        transport.clearRequests()
        #expect(transport.requests.isEmpty)
    }

    @Test func isSafeUnderConcurrentUse() async throws {
        let transport = RecordingTransport(fallback: .status(200))
        for _ in 0..<50 { transport.enqueue(.status(503), for: "/p") }
        let statuses = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<200 {
                group.addTask { (try? await transport.send(request("/p")).status) ?? -1 }
            }
            var all: [Int] = []
            for await status in group { all.append(status) }
            return all
        }
        #expect(statuses.filter { $0 == 503 }.count == 50)
        #expect(statuses.filter { $0 == 200 }.count == 150)
        #expect(transport.requests.count == 200)
    }
}
