// Benchmarks for the geo index (not timed tests): open time, single-lookup latency, in-process
// throughput on one core and private memory. Also writes point sets for the batch and peer runs.
//
//   geoindex-bench lookup INDEX [--points N] [--set uniform|land|populated|track] [--places cities.txt] [--file POINTS.csv] [--spatial-order]
//   geoindex-bench points N [--set uniform|land|populated] [--places cities.txt] [--seed S] [--index FILE]
//   geoindex-bench answer-tiles INDEX POINTS.csv [--cells N] [--area]
#if canImport(Glibc)
import Glibc
#endif
import GeoIndex
import GeoPlaces
import SystemWrites

struct Generator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }

    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
}

func fail(_ message: String) -> Never {
    let text = Array("geoindex-bench: \(message)\n".utf8)
    _ = text.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    exit(2)
}

func option(_ name: String, _ arguments: [String]) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

/// Coordinates of GeoNames places (columns 5 and 6 of the cities TSV).
func placeCoordinates(_ path: String) -> [(Double, Double)] {
    guard let file = fopen(path, "r") else { fail("cannot read \(path); run scripts/fetch-geodata.sh") }
    defer { fclose(file) }
    var result: [(Double, Double)] = []
    var line: UnsafeMutablePointer<CChar>?
    var capacity = 0
    while getline(&line, &capacity, file) > 0 {
        guard let line else { break }
        let fields = String(decoding: UnsafeBufferPointer(start: line, count: strlen(line)).map { UInt8(bitPattern: $0) }, as: UTF8.self).split(separator: "\t", omittingEmptySubsequences: false)
        if fields.count > 5, let lat = Double(fields[4]), let lon = Double(fields[5]) { result.append((lat, lon)) }
    }
    free(line)
    return result
}

/// Uniform on the sphere; uniform on land (uniform points the index puts in a country);
/// GeoNames places jittered by up to ~20 km (where devices are, and the densest data); or tracks
/// of consecutive nearby fixes (a device's real pattern: the data it needs stays in cache).
func points(count: Int, set: String, places: String, seed: UInt64, index: String? = nil) -> [(Double, Double)] {
    var random = Generator(state: seed | 1)
    if set == "land" {
        guard let index, let reader = try? GeoIndexReader(path: index) else { fail("--set land needs --index FILE") }
        var result: [(Double, Double)] = []
        while result.count < count {
            let point = (asin(2 * random.unit() - 1) * 180 / Double.pi, random.unit() * 360 - 180)
            if reader.place(latitude: point.0, longitude: point.1).countryCode != nil { result.append(point) }
        }
        return result
    }
    if set == "uniform" {
        return (0..<count).map { _ in
            (asin(2 * random.unit() - 1) * 180 / Double.pi, random.unit() * 360 - 180)
        }
    }
    let anchors = placeCoordinates(places)
    guard !anchors.isEmpty else { fail("no places in \(places)") }
    if set == "track" {
        // Like a moving device: 1,000 fixes ~15 m apart from a random place, then another place.
        var result: [(Double, Double)] = []
        var position = (0.0, 0.0)
        var heading = 0.0
        while result.count < count {
            if result.count % 1000 == 0 {
                position = anchors[Int(random.next() % UInt64(anchors.count))]
                heading = random.unit() * 2 * Double.pi
            }
            heading += (random.unit() - 0.5) * 0.3
            position.0 = min(max(position.0 + cos(heading) * 15 / 110_574, -90), 90)
            position.1 += sin(heading) * 15 / (111_320 * max(cos(position.0 * Double.pi / 180), 0.01))
            if position.1 > 180 { position.1 -= 360 } else if position.1 < -180 { position.1 += 360 }
            result.append(position)
        }
        return result
    }
    return (0..<count).map { _ in
        let anchor = anchors[Int(random.next() % UInt64(anchors.count))]
        let lat = min(max(anchor.0 + (random.unit() - 0.5) * 0.36, -90), 90)
        var lon = anchor.1 + (random.unit() - 0.5) * 0.36
        if lon > 180 { lon -= 360 } else if lon < -180 { lon += 360 }
        return (lat, lon)
    }
}

/// Anonymous (non-file-backed) and resident memory of this process in kB.
func memory() -> (anonymous: Int, resident: Int) {
    guard let file = fopen("/proc/self/smaps_rollup", "r") else { return (-1, -1) }
    defer { fclose(file) }
    var anonymous = -1, resident = -1
    var buffer = [CChar](repeating: 0, count: 256)
    while fgets(&buffer, 256, file) != nil {
        let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let value = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
        if line.hasPrefix("Anonymous:") { anonymous = value }
        if line.hasPrefix("Rss:") { resident = value }
    }
    return (anonymous, resident)
}

func runLookup(_ arguments: [String]) {
    guard arguments.count >= 1 else { fail("usage: geoindex-bench lookup INDEX [--points N] [--set uniform|populated]") }
    let path = arguments[0]
    let count = Int(option("--points", arguments) ?? "") ?? 100_000
    let set = option("--set", arguments) ?? "populated"
    let places = option("--places", arguments) ?? "cache/geodata/out/cities.txt"
    // --file: the points of a set file (lat,lon lines), to time the same points another door looks up.
    let file = option("--file", arguments)
    var workload = file.map(readPointSet) ?? points(count: count, set: set, places: places, seed: 42, index: path)
    // --spatial-order: the points in the order the back office's door looks them up in.
    if arguments.contains("--spatial-order") {
        let points = workload
        workload = SpatialOrder.blocks(count: points.count, point: { (points[$0].0, points[$0].1) }).flatMap { range, order in
            order.map { points[range.lowerBound + Int($0)] }
        }
    }
    let before = memory()

    var opens: [Double] = []
    for _ in 0..<21 {
        let start = now()
        do {
            _ = try GeoIndexReader(path: path)
        } catch {
            fail("\(error)")
        }
        opens.append(now() - start)
    }
    opens.sort()
    let reader: GeoIndexReader
    do {
        reader = try GeoIndexReader(path: path)
    } catch {
        fail("\(error)")
    }

    // Warm the mapping once so latency reflects lookups, not first-touch page faults.
    var checksum = 0
    for (lat, lon) in workload { checksum &+= reader.place(latitude: lat, longitude: lon).countryCode?.utf8.count ?? 0 }

    var latencies: [Double] = []
    latencies.reserveCapacity(workload.count)
    var found = 0
    for (lat, lon) in workload {
        let start = now()
        let place = reader.place(latitude: lat, longitude: lon)
        latencies.append(now() - start)
        if place.countryCode != nil { found += 1 }
    }
    latencies.sort()
    let after = memory()

    let rounds = max(1, 1_000_000 / workload.count)
    let start = now()
    for _ in 0..<rounds {
        for (lat, lon) in workload { checksum &+= reader.place(latitude: lat, longitude: lon).localityName?.utf8.count ?? 0 }
    }
    let elapsed = now() - start
    let total = rounds * workload.count

    func micro(_ seconds: Double) -> String { String(Double(Int(seconds * 1e8)) / 100) }
    print("index: \(path)")
    print("points: \(workload.count) \(file ?? set) (\(found) with a country)")
    print("open: min \(micro(opens[0])) us, median \(micro(opens[10])) us, max \(micro(opens[20])) us (21 opens)")
    print("lookup latency: p50 \(micro(latencies[latencies.count / 2])) us, p99 \(micro(latencies[latencies.count * 99 / 100])) us, max \(micro(latencies[latencies.count - 1])) us")
    print("throughput: \(Int(Double(total) / elapsed)) lookups/s on one thread (\(total) lookups in \(micro(elapsed)) us) [\(checksum % 7)]")
    print("memory: anonymous \(before.anonymous) kB before open -> \(after.anonymous) kB after \(workload.count) lookups (+\(after.anonymous - before.anonymous) kB); RSS \(after.resident) kB")
}

func runPoints(_ arguments: [String]) {
    let count = Int(arguments.first ?? "") ?? 100_000
    let set = option("--set", arguments) ?? "populated"
    let places = option("--places", arguments) ?? "cache/geodata/out/cities.txt"
    let seed = UInt64(option("--seed", arguments) ?? "") ?? 7
    var out = ""
    for (lat, lon) in points(count: count, set: set, places: places, seed: seed, index: option("--index", arguments)) {
        out += "\(Double(Int(lat * 1e6)) / 1e6),\(Double(Int(lon * 1e6)) / 1e6)\n"
        if out.utf8.count > 1 << 16 {
            emit(out)
            out = ""
        }
    }
    emit(out)
}

func emit(_ text: String) {
    do {
        try Descriptor.writeAll(Array(text.utf8), to: STDOUT_FILENO)
    } catch {
        fail("cannot write the points")
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "lookup": runLookup(Array(arguments.dropFirst()))
case "points": runPoints(Array(arguments.dropFirst()))
case "answer-tiles": runAnswerTiles(Array(arguments.dropFirst()))
default: fail("usage: geoindex-bench lookup INDEX [--points N] [--set uniform|populated] | points N [--set ...] [--seed S] | answer-tiles INDEX POINTS.csv [--cells N] [--area]")
}

/// `lat,lon` lines of a point set file (the batch sets under cache/bench/).
func readPointSet(_ path: String) -> [(Double, Double)] {
    guard let file = fopen(path, "r") else { fail("cannot read \(path); run Benchmarks/geocoder/bench.sh once to write the sets") }
    defer { fclose(file) }
    var result: [(Double, Double)] = []
    var line: UnsafeMutablePointer<CChar>?
    var capacity = 0
    while getline(&line, &capacity, file) > 0 {
        guard let line else { break }
        let fields = String(cString: line).split(separator: ",")
        if fields.count == 2, let lat = Double(fields[0]), let lon = Double(fields[1].split(separator: "\n").first ?? "") {
            result.append((lat, lon))
        }
    }
    free(line)
    return result
}

/// Could lookups be answered from precomputed tiles? A quadtree under each one-degree cell is
/// split until all attributes (or, with --area, country and region) agree at a tile's 3 x 3
/// sample points. Sampling misses some disagreement, so the sizes are lower bounds and the hit
/// rates upper bounds. Root cells are drawn at random among those holding points of the set;
/// sizes are scaled to all such cells (8 bytes a leaf, 16 an inner node), hit rates are over the
/// set's points in the drawn cells.
func runAnswerTiles(_ arguments: [String]) {
    guard arguments.count >= 2 else { fail("usage: geoindex-bench answer-tiles INDEX POINTS.csv [--cells N] [--area]") }
    let reader: GeoIndexReader
    do { reader = try GeoIndexReader(path: arguments[0]) } catch { fail("\(error)") }
    let areaOnly = arguments.contains("--area")
    let sampleCells = Int(option("--cells", arguments) ?? "") ?? 60
    let maximumDepth = 9
    var pointsByCell: [Int: [(Double, Double)]] = [:]
    for point in readPointSet(arguments[1]) {
        pointsByCell[Int((point.0 + 90).rounded(.down)) * 360 + Int((point.1 + 180).rounded(.down)), default: []].append(point)
    }
    let occupied = pointsByCell.keys.sorted()
    guard !occupied.isEmpty else { fail("no points in \(arguments[1])") }
    var generator = Generator(state: 99)
    var drawn: [Int] = []
    var seen = Set<Int>()
    while drawn.count < min(sampleCells, occupied.count) {
        let cell = occupied[Int(generator.next() % UInt64(occupied.count))]
        if seen.insert(cell).inserted { drawn.append(cell) }
    }
    func answer(_ place: GeoPlace) -> [String?] {
        areaOnly ? [place.countryCode, place.regionCode] : [place.countryCode, place.regionCode, place.localityName, place.postalCode]
    }
    var uniformAt = [Int](repeating: 0, count: maximumDepth + 1)
    var mixedAt = [Int](repeating: 0, count: maximumDepth + 1)
    var hitsWithin = [Int](repeating: 0, count: maximumDepth + 1)
    var pointCount = 0
    for cell in drawn {
        let south = Double(cell / 360 - 90), west = Double(cell % 360 - 180)
        var uniformTiles = Set<Int>()
        func tileKey(_ depth: Int, _ x: Int, _ y: Int) -> Int { depth << 40 | y << 20 | x }
        func split(_ depth: Int, _ x: Int, _ y: Int) {
            let size = 1 / Double(1 << depth)
            let first = answer(reader.place(latitude: south + Double(y) * size, longitude: west + Double(x) * size))
            var uniform = true
            sampling: for i in 0...2 {
                for j in 0...2 where uniform {
                    let latitude = min(south + (Double(y) + Double(i) / 2) * size, 89.99)
                    let longitude = min(west + (Double(x) + Double(j) / 2) * size, 179.999)
                    if answer(reader.place(latitude: latitude, longitude: longitude)) != first {
                        uniform = false
                        break sampling
                    }
                }
            }
            if uniform {
                uniformAt[depth] += 1
                uniformTiles.insert(tileKey(depth, x, y))
                return
            }
            mixedAt[depth] += 1
            guard depth < maximumDepth else { return }
            for quadrant in 0..<4 { split(depth + 1, x * 2 + quadrant & 1, y * 2 + quadrant >> 1) }
        }
        split(0, 0, 0)
        for (latitude, longitude) in pointsByCell[cell] ?? [] {
            pointCount += 1
            for depth in 0...maximumDepth {
                let tiles = 1 << depth
                let x = min(Int(((longitude - west) * Double(tiles)).rounded(.down)), tiles - 1)
                let y = min(Int(((latitude - south) * Double(tiles)).rounded(.down)), tiles - 1)
                if uniformTiles.contains(tileKey(depth, x, y)) {
                    for deeper in depth...maximumDepth { hitsWithin[deeper] += 1 }
                    break
                }
            }
        }
    }
    print("\(areaOnly ? "country and region" : "all attributes"): \(drawn.count) of \(occupied.count) occupied one-degree cells, \(pointCount) points")
    for depth in 0...maximumDepth {
        let leaves = uniformAt[0...depth].reduce(0, +) + mixedAt[depth]
        let inner = mixedAt[0..<depth].reduce(0, +)
        let bytes = Double(leaves * 8 + inner * 16) / Double(drawn.count) * Double(occupied.count)
        let tileMeters = Int(111_320 / Double(1 << depth))
        print("tiles down to \(tileMeters) m: \(leaves / drawn.count) leaves a cell, world >= \(Int(bytes / 1e6)) MB, answered from a tile <= \(Double(Int(Double(hitsWithin[depth]) / Double(max(pointCount, 1)) * 1000)) / 10)%")
    }
}
