// SPDX-License-Identifier: Apache-2.0
// The eth_call workloads of `npm run bench:evm` (see bench/workloads/README.md). Each entry point takes a
// seed, so every request's calldata differs and no per-height call memo can answer it; the same seed gives
// the same result on every node, which the bench compares to prove that each node did the same work.
// Each also returns, last, the gas its body used (gasleft() before and after): the bench's Mgas/s, with no
// eth_estimateGas (which runs a call many times).
pragma solidity 0.8.37;

/// A plain ERC-20 state (balances, allowances, totalSupply, Transfer and Approval events) with three loops.
/// The loops write state inside eth_call only: nothing of it is persisted.
contract TokenLoops {
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    uint256 public totalSupply;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    uint256 private constant ROUNDS = 5000;

    function transfer(address to, uint256 value) public returns (bool) {
        _transfer(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) public returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) public returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            require(allowed >= value, "allowance exceeded");
            unchecked {
                allowance[from][msg.sender] = allowed - value;
            }
        }
        _transfer(from, to, value);
        return true;
    }

    /// 5 000 mints of 1..5 000 (+ seed) to one holder that depends on the seed; each mint reads and writes
    /// the holder's balance and totalSupply and emits Transfer (LOG3).
    function mintLoop(uint256 seed) external returns (uint256 supply, uint256 balance, uint256 gasUsed) {
        uint256 start = gasleft();
        address holder = _account("holder", seed);
        uint256 extra = seed % 1000;
        for (uint256 i = 1; i <= ROUNDS; i++) {
            _mint(holder, i + extra);
        }
        return (totalSupply, balanceOf[holder], start - gasleft());
    }

    /// Mints to the caller, then 5 000 transfers (`transfer`, an internal jump) of 1..5 000 to a recipient
    /// that depends on the seed.
    function transferLoop(uint256 seed)
        external
        returns (uint256 senderBalance, uint256 recipientBalance, uint256 gasUsed)
    {
        uint256 start = gasleft();
        address to = _account("recipient", seed);
        _mint(msg.sender, 1e27 + seed);
        for (uint256 i = 1; i <= ROUNDS; i++) {
            transfer(to, i);
        }
        return (balanceOf[msg.sender], balanceOf[to], start - gasleft());
    }

    /// Mints to the caller, then 5 000 times: the caller approves this contract for i, and this contract
    /// moves i from the caller to a recipient that depends on the seed through an external call to its own
    /// `transferFrom` (a CALL, with the allowance read and spent).
    function approveTransferFromLoop(uint256 seed)
        external
        returns (uint256 recipientBalance, uint256 left, uint256 gasUsed)
    {
        uint256 start = gasleft();
        address to = _account("recipient", seed);
        address owner = msg.sender;
        _mint(owner, 1e27 + seed);
        for (uint256 i = 1; i <= ROUNDS; i++) {
            allowance[owner][address(this)] = i + 1;
            emit Approval(owner, address(this), i + 1);
            require(this.transferFrom(owner, to, i), "transferFrom failed");
        }
        return (balanceOf[to], allowance[owner][address(this)], start - gasleft());
    }

    function _mint(address to, uint256 value) internal {
        totalSupply += value;
        unchecked {
            balanceOf[to] += value;
        }
        emit Transfer(address(0), to, value);
    }

    function _transfer(address from, address to, uint256 value) internal {
        uint256 fromBalance = balanceOf[from];
        require(fromBalance >= value, "balance exceeded");
        unchecked {
            balanceOf[from] = fromBalance - value;
            balanceOf[to] += value;
        }
        emit Transfer(from, to, value);
    }

    function _account(string memory role, uint256 seed) internal pure returns (address) {
        return address(uint160(uint256(keccak256(abi.encode(role, seed)))));
    }
}

/// 10 000 chained keccak256 of 64 bytes (the previous hash and the index), through abi.encodePacked as
/// Solidity code writes it: each round also allocates memory, so memory grows to ~1 MB.
contract KeccakLoop {
    function hashLoop(uint256 seed) external view returns (bytes32 h, uint256 gasUsed) {
        uint256 start = gasleft();
        h = bytes32(seed);
        for (uint256 i = 0; i < 10000; i++) {
            h = keccak256(abi.encodePacked(h, i));
        }
        gasUsed = start - gasleft();
    }
}

/// A fixed-point (int256, 1e18 = 1.0) ray tracer: spheres on a checkered plane, one light with shadow
/// rays, reflections two bounces deep, square roots by Newton's method. The scene lives in memory (MLOAD
/// per sphere field) and the image is written into a bytes buffer (MSTORE8 per channel) whose keccak256 is
/// returned with the sum of its channels. The seed moves the camera by less than a pixel.
contract RayTracer {
    int256 private constant ONE = 1e18;
    int256 private constant EPS = 1e13;
    int256 private constant FAR = type(int256).max;
    // The light's direction, normalized: (-0.5, 1, -0.6) / |.|
    int256 private constant LX = -394_055_203_119_550_322;
    int256 private constant LY = 788_110_406_239_100_644;
    int256 private constant LZ = -472_866_243_743_460_386;

    struct Sphere {
        int256 cx;
        int256 cy;
        int256 cz;
        int256 r;
        int256 red;
        int256 green;
        int256 blue;
        int256 reflect;
    }

    struct Hit {
        int256 t;
        // The sphere's index, or -1 for the plane, or -2 for nothing.
        int256 what;
    }

    function render(uint256 seed, uint256 width, uint256 height)
        external
        view
        returns (bytes32 digest, uint256 sum, uint256 gasUsed)
    {
        uint256 start = gasleft();
        require(width > 0 && height > 0 && width <= 512 && height <= 512, "bad size");
        Sphere[] memory scene = new Sphere[](5);
        scene[0] = Sphere(0, ONE, 3 * ONE, ONE, 9e17, 2e17, 2e17, 3e17);
        scene[1] = Sphere(-2 * ONE, 6e17, 4 * ONE, 6e17, 2e17, 8e17, 2e17, 0);
        scene[2] = Sphere(2 * ONE, 8e17, 5 * ONE, 8e17, 2e17, 3e17, 9e17, 5e17);
        scene[3] = Sphere(-5e17, 3e17, 15e17, 3e17, 9e17, 9e17, 2e17, 0);
        scene[4] = Sphere(12e17, 25e16, 2 * ONE, 25e16, 9e17, 5e17, 1e17, 2e17);
        bytes memory image = new bytes(width * height * 3);
        int256 ox = int256(seed % 1000) * 1e12;
        int256 w = int256(width);
        int256 h = int256(height);
        uint256 offset = 0;
        for (int256 y = 0; y < h; y++) {
            for (int256 x = 0; x < w; x++) {
                (int256 dx, int256 dy, int256 dz) =
                    _normalize(((2 * x + 1 - w) * ONE) / h, ((h - 2 * y - 1) * ONE) / h, 2 * ONE);
                // A pixel's temporaries (vectors, hits) are dead once its colour is known: give their memory
                // back, so memory stays small and its expansion cost does not grow with the image.
                uint256 free;
                assembly ("memory-safe") {
                    free := mload(0x40)
                }
                (int256 r, int256 g, int256 b) = _trace(scene, [ox, ONE, -3 * ONE], [dx, dy, dz], 2);
                assembly ("memory-safe") {
                    mstore(0x40, free)
                }
                uint8 cr = _channel(r);
                uint8 cg = _channel(g);
                uint8 cb = _channel(b);
                image[offset] = bytes1(cr);
                image[offset + 1] = bytes1(cg);
                image[offset + 2] = bytes1(cb);
                offset += 3;
                sum += uint256(cr) + cg + cb;
            }
        }
        digest = keccak256(image);
        gasUsed = start - gasleft();
    }

    function _trace(Sphere[] memory scene, int256[3] memory o, int256[3] memory d, uint256 depth)
        internal
        pure
        returns (int256 r, int256 g, int256 b)
    {
        Hit memory hit = _nearest(scene, o, d);
        if (hit.what == -2) {
            // The sky: a gradient with the ray's height.
            int256 k = (d[1] + ONE) / 2;
            return (_mul(k, 5e17) + 3e17, _mul(k, 6e17) + 35e16, ONE);
        }
        int256[3] memory p = [o[0] + _mul(d[0], hit.t), o[1] + _mul(d[1], hit.t), o[2] + _mul(d[2], hit.t)];
        int256[3] memory n;
        int256 reflect;
        if (hit.what == -1) {
            n = [int256(0), ONE, int256(0)];
            bool dark = ((_floor(p[0]) + _floor(p[2])) & 1) == 1;
            (r, g, b) = dark ? (int256(15e16), int256(15e16), int256(15e16)) : (int256(9e17), int256(9e17), int256(9e17));
            reflect = 1e17;
        } else {
            Sphere memory s = scene[uint256(hit.what)];
            n = [_div(p[0] - s.cx, s.r), _div(p[1] - s.cy, s.r), _div(p[2] - s.cz, s.r)];
            (r, g, b, reflect) = (s.red, s.green, s.blue, s.reflect);
        }
        int256 light = _dot(n, [LX, LY, LZ]);
        int256[3] memory lifted = [p[0] + _mul(n[0], 1e15), p[1] + _mul(n[1], 1e15), p[2] + _mul(n[2], 1e15)];
        if (light < 0 || _nearest(scene, lifted, [LX, LY, LZ]).what >= 0) light = 0;
        int256 shade = 1e17 + _mul(9e17, light);
        (r, g, b) = (_mul(r, shade), _mul(g, shade), _mul(b, shade));
        if (reflect > 0 && depth > 0) {
            int256 twice = 2 * _dot(d, n);
            int256[3] memory rd = [d[0] - _mul(twice, n[0]), d[1] - _mul(twice, n[1]), d[2] - _mul(twice, n[2])];
            (int256 rr, int256 rg, int256 rb) = _trace(scene, lifted, rd, depth - 1);
            int256 keep = ONE - reflect;
            r = _mul(r, keep) + _mul(rr, reflect);
            g = _mul(g, keep) + _mul(rg, reflect);
            b = _mul(b, keep) + _mul(rb, reflect);
        }
    }

    function _nearest(Sphere[] memory scene, int256[3] memory o, int256[3] memory d)
        internal
        pure
        returns (Hit memory hit)
    {
        hit = Hit(FAR, -2);
        for (uint256 i = 0; i < scene.length; i++) {
            int256 t = _sphere(scene[i], o, d);
            if (t < hit.t) hit = Hit(t, int256(i));
        }
        if (d[1] < 0) {
            int256 t = _div(-o[1], d[1]);
            if (t > EPS && t < hit.t && t < 40 * ONE) hit = Hit(t, -1);
        }
    }

    /// The distance along d from o to the sphere, or FAR when the ray misses it.
    function _sphere(Sphere memory s, int256[3] memory o, int256[3] memory d) internal pure returns (int256) {
        int256[3] memory l = [s.cx - o[0], s.cy - o[1], s.cz - o[2]];
        int256 tca = _dot(l, d);
        int256 d2 = _dot(l, l) - _mul(tca, tca);
        int256 r2 = _mul(s.r, s.r);
        if (d2 > r2) return FAR;
        int256 thc = _sqrt(r2 - d2);
        if (tca - thc > EPS) return tca - thc;
        if (tca + thc > EPS) return tca + thc;
        return FAR;
    }

    function _normalize(int256 x, int256 y, int256 z) internal pure returns (int256, int256, int256) {
        int256 len = _sqrt(_mul(x, x) + _mul(y, y) + _mul(z, z));
        return (_div(x, len), _div(y, len), _div(z, len));
    }

    function _dot(int256[3] memory a, int256[3] memory b) internal pure returns (int256) {
        return _mul(a[0], b[0]) + _mul(a[1], b[1]) + _mul(a[2], b[2]);
    }

    function _mul(int256 a, int256 b) internal pure returns (int256) {
        return (a * b) / ONE;
    }

    function _div(int256 a, int256 b) internal pure returns (int256) {
        return (a * ONE) / b;
    }

    function _floor(int256 a) internal pure returns (int256) {
        int256 q = a / ONE;
        return a < 0 && q * ONE != a ? q - 1 : q;
    }

    /// sqrt(a) for a >= 0 in fixed point: the integer square root of a * 1e18, by Newton's method from a
    /// power of two above the root.
    function _sqrt(int256 a) internal pure returns (int256) {
        if (a <= 0) return 0;
        uint256 n = uint256(a) * uint256(ONE);
        uint256 z = 1;
        uint256 m = n;
        if (m >= 1 << 128) {
            m >>= 128;
            z <<= 64;
        }
        if (m >= 1 << 64) {
            m >>= 64;
            z <<= 32;
        }
        if (m >= 1 << 32) {
            m >>= 32;
            z <<= 16;
        }
        if (m >= 1 << 16) {
            m >>= 16;
            z <<= 8;
        }
        if (m >= 1 << 8) {
            m >>= 8;
            z <<= 4;
        }
        if (m >= 1 << 4) {
            m >>= 4;
            z <<= 2;
        }
        if (m >= 1 << 2) z <<= 1;
        z <<= 1;
        // z >= sqrt(n) now; Newton's iterations decrease to floor(sqrt(n)).
        uint256 next = (z + n / z) >> 1;
        while (next < z) {
            z = next;
            next = (z + n / z) >> 1;
        }
        return int256(z);
    }

    function _channel(int256 v) internal pure returns (uint8) {
        if (v <= 0) return 0;
        if (v >= ONE) return 255;
        return uint8(uint256((v * 255) / ONE));
    }
}
