import Foundation
import SegmentsDomain
import SegmentsEmulator
import SegmentsNetworking
import SegmentsTesting
import Testing

extension LiveIntegrationTests {
    /// Many requests at once through one `URLSessionSegmentsTransport` against one emulator.
    @Suite(Hang.timeLimit(minutes: 2)) struct LiveConcurrencyTests {
        private static let count = 50

        private static func cookie(_ index: Int) -> String { "cookie-\(index)" }

        @Test func fiftyConcurrentFetchesThroughOneTransportEachGetTheirOwnAnswer() async throws {
            let live = try LiveHarness(.project)
            defer { live.stop() }
            for index in 0..<Self.count {
                live.emulator.setFixedSegments(
                    ["discovery": [EmulatorSegment(id: "s-\(index)", segmentationId: "g")]], forCookie: Self.cookie(index))
            }
            let repository = live.repository

            let results = try await withThrowingTaskGroup(of: (Int, SegmentsByCategory).self) { group in
                for index in 0..<Self.count {
                    group.addTask {
                        (index, try await repository.fetchSegments(for: CustomerIds(cookie: Self.cookie(index))))
                    }
                }
                return try await group.reduce(into: [Int: SegmentsByCategory]()) { $0[$1.0] = $1.1 }
            }

            #expect(results.count == Self.count)
            for (index, segments) in results {
                #expect(segments == [.discovery(): [Segment(id: "s-\(index)", segmentationId: "g")]])
            }
            let fetches = live.requests(on: .fetch)
            #expect(fetches.count == Self.count)
            #expect(Set(fetches.compactMap { $0.query["cookie"] }) == Set((0..<Self.count).map(Self.cookie)))
        }

        @Test func concurrentUploadsAllArriveExactlyOnce() async throws {
            let live = try LiveHarness(.stream)
            defer { live.stop() }
            let uploader = live.uploader

            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<Self.count {
                    group.addTask {
                        let customer = CustomerIds(cookie: Self.cookie(index))
                        if index.isMultiple(of: 5) {
                            try await uploader.upload(TrackedEvent(
                                kind: .customerUpdate, customerIds: customer, properties: ["n": .int(index)],
                                timestamp: Harness.now))
                        } else {
                            try await uploader.upload(Live.event("view", for: customer, properties: ["n": .int(index)]))
                        }
                    }
                }
                try await group.waitForAll()
            }

            let events = live.emulator.events
            let updates = live.emulator.customerUpdates
            #expect(events.count == Self.count * 4 / 5)
            #expect(updates.count == Self.count / 5)
            let received = events.map { $0.properties["n"] } + updates.map { $0.properties["n"] }
            #expect(Set(received) == Set((0..<Self.count).map { EmulatorJSON.number(Double($0)) }))
            #expect(received.count == Self.count)
            for event in events {
                #expect(event.customerIds["cookie"] == Self.cookie(Int(event.properties["n"].flatMap(Self.number) ?? -1)))
            }
        }

        @Test func injectedFaultsHitExactlyThatManyOfManyConcurrentFetches() async throws {
            let live = try LiveHarness(.project)
            defer { live.stop() }
            live.emulator.injectFault(.status(503, retryAfter: "2"), on: .fetch, count: 5)
            let repository = live.repository

            let errors = await withTaskGroup(of: SegmentsError?.self) { group in
                for index in 0..<Self.count {
                    group.addTask {
                        await segmentsError {
                            _ = try await repository.fetchSegments(for: CustomerIds(cookie: Self.cookie(index)))
                        }
                    }
                }
                return await group.reduce(into: [SegmentsError?]()) { $0.append($1) }
            }

            let failures = errors.compactMap { $0 }
            #expect(failures.count == 5)
            #expect(failures.allSatisfy {
                $0.code == .httpStatus && $0.httpStatus == 503 && $0.retryAfter == 2 && $0.isTransient
            })
            #expect(live.requests(on: .fetch).count == Self.count)
            #expect(live.emulator.pendingFaultCount == 0)
        }

        private static func number(_ value: EmulatorJSON) -> Int? {
            if case .number(let number) = value { return Int(number) }
            return nil
        }
    }
}
