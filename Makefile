# mla-compiler: two entry points, each doing all set-up on a fresh Debian 12.
#   make run   installs missing packages, builds, compiles the default spec
#              and runs it once on the CPU against the float64 reference
#   make test  the same set-up, then every test (lit + GoogleTest via ctest)

BUILD ?= build
SPEC  ?= kernels/deepseek_r1_decode_fp8.mlir
JOBS  ?= $(shell nproc)

ARTIFACTS ?= artifacts
PTXAS ?= /usr/local/cuda/bin/ptxas

.PHONY: all deps configure build run test test-sanitize fuzz artifacts device-extras clean

all: build

deps:
	@bash .ci/install-deps

$(BUILD)/build.ninja:
	cmake -G Ninja -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	@echo "== mla-opt --mla-to-tiles $(SPEC): kernels emitted"
	@$(BUILD)/bin/mla-opt --mla-to-tiles $(SPEC) | grep -E '^ *mla.kernel' | sed -E 's/\(.*attributes/ .../'
	@echo "== mla-run $(SPEC): CPU execution (bs 4, kv 1024, fresh random inputs)"
	$(BUILD)/bin/mla-run $(SPEC) --batch=4 --kv-len=1024
	@echo "== mla-run $(SPEC): ragged batch (kv 1, 17, 1000), masked stage 1"
	$(BUILD)/bin/mla-run $(SPEC) --kv-lens=1,17,1000
	@echo "== mla-run $(SPEC) --chip=gfx950: the gfx950 code object executed on the ISA emulator"
	$(BUILD)/bin/mla-run $(SPEC) --chip=gfx950 --kv-lens=1,17,1000 --stats
	@echo "== mla-compile $(SPEC) --chip=gfx950: code object, assembly, manifest, resource report"
	$(BUILD)/bin/mla-compile $(SPEC) --chip=gfx950 -o $(BUILD)/artifacts
	@echo "== mla-compile $(SPEC) --chip=sm_90: cubin, manifest and resource report"
	$(BUILD)/bin/mla-compile $(SPEC) --chip=sm_90 --ptxas=$(PTXAS) -o $(BUILD)/artifacts

# The specs (kernels/deepseek_r1_decode_<name>.mlir) that `make artifacts`
# compiles as they are, by chip. sm_90: the mma.sync path.
ARTIFACT_SPECS_sm_90 = fp8 bf16 fp8_qp8 fp8_qp16 fp8_qp16_mtp2 fp8_qp16_h128 fp8_mtp2 fp8_h128 \
  bf16_mtp2 bf16_h128 fp8_qp16_paged64 bf16_paged64 fp8_qp16_kvindices fp8_qp16_mtp2_paged64 \
  mxfp4 mxfp4_n32
# sm_90a's wgmma path (issue #19): custom_kernel's first choice for bf16,
# fp8 (f16 Q and P) and mxfp4 KV (python/mla_torch.py), timed beside
# sm_90's by bench/wgmma_h200.py.
ARTIFACT_SPECS_sm_90a = bf16_sm90a bf16_sm90a_mtp2 bf16_sm90a_h128 bf16_sm90a_paged64 \
  fp8_qp16_sm90a fp8_qp16_sm90a_mtp2 fp8_qp16_sm90a_mtp2_paged64 fp8_qp16_sm90a_h128 \
  fp8_qp16_sm90a_paged64 fp8_qp16_sm90a_kvindices mxfp4_sm90a fp8_qp8_sm90a fp8_qp8_sm90a_mtp2 \
  mxfp4_qp8_sm90a fp8_e4m3x2_sm90a

# Code objects and manifests of the sm_90 / sm_90a specs python/mla_torch.py
# loads and bench/ (MLA_ARTIFACTS=$(ARTIFACTS)), and the library it launches
# them with.
artifacts: build
	for cs in $(foreach c,sm_90 sm_90a,$(addprefix $(c):,$(ARTIFACT_SPECS_$(c)))); do \
	  $(BUILD)/bin/mla-compile kernels/deepseek_r1_decode_$${cs#*:}.mlir --chip=$${cs%%:*} \
	    --ptxas=$(PTXAS) -o $(ARTIFACTS) || exit 1; done
	# Variants derived from those specs (a renamed copy, a sed expression,
	# compile flags; the table and why each exists: bench/spec_variants.sh),
	# their spec files in $(BUILD)/variants.
	PTXAS=$(PTXAS) bash bench/spec_variants.sh $(BUILD)/bin/mla-compile $(BUILD)/variants $(ARTIFACTS)
	# The qp8 specs and the two-term one with the softmax scale divided by
	# 2^10 and multiplied by 2^12, which bench/q_magnitude_h200.py feeds Q
	# times 2^10 / 2^-12.
	PTXAS=$(PTXAS) bash bench/q_magnitude_specs.sh $(BUILD)/bin/mla-compile sm_90 $(ARTIFACTS) "" \
	  kernels/deepseek_r1_decode_fp8_qp8.mlir
	PTXAS=$(PTXAS) bash bench/q_magnitude_specs.sh $(BUILD)/bin/mla-compile sm_90a $(ARTIFACTS) "" \
	  kernels/deepseek_r1_decode_fp8_qp8_sm90a.mlir kernels/deepseek_r1_decode_fp8_e4m3x2_sm90a.mlir
	MLA_COMPILE_FLAGS=--e4m3-double-buffer PTXAS=$(PTXAS) bash bench/q_magnitude_specs.sh \
	  $(BUILD)/bin/mla-compile sm_90a $(ARTIFACTS) "" \
	  $(BUILD)/variants/deepseek_r1_decode_fp8_e4m3x2_db_sm90a.mlir
	cp $(BUILD)/lib/libmla_launcher-cuda.so $(ARTIFACTS)/

# What bench/run_h200.sh runs beside our kernels (the seed port, the
# embed-cuda example that `make test` built, FlashMLA's sources where
# FLASHMLA_GIT and CUTLASS_GIT are given), into $(ARTIFACTS).
device-extras:
	bash bench/device_extras.sh $(BUILD) $(ARTIFACTS)

test: build
	cd $(BUILD) && ctest --output-on-failure
	$(MAKE) test-sanitize

# The host tests (unit, numerics, compile report, launcher, emulator) built
# with clang-22, AddressSanitizer + UndefinedBehaviorSanitizer in
# $(BUILD)-san and run there; any report fails them (issue #16). The same
# build carries libFuzzer's coverage instrumentation and the two fuzzers
# (test/fuzz): test-sanitize runs each for its CI budget, `make fuzz` for
# FUZZ_SECONDS each. MLIR / LLVM themselves are not instrumented (Debian's
# shared libraries).
SAN_FLAGS = -fsanitize=address,undefined,fuzzer-no-link -fno-omit-frame-pointer -fno-sanitize-recover=undefined
SAN_TESTS = mla-unit-tests mla-numerics-tests mla-compile-tests mla-launcher-tests mla-emulator-tests \
            mla-fuzz-spec mla-fuzz-launcher
FUZZ_SECONDS ?= 600
$(BUILD)-san/build.ninja:
	cmake -G Ninja -S . -B $(BUILD)-san -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 -DMLA_BUILD_FUZZERS=ON \
	  -DCMAKE_C_FLAGS="$(SAN_FLAGS)" -DCMAKE_CXX_FLAGS="$(SAN_FLAGS)" \
	  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
	  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined"

SAN_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1
test-sanitize: deps $(BUILD)-san/build.ninja
	cmake --build $(BUILD)-san -j $(JOBS) --target $(SAN_TESTS)
	cd $(BUILD)-san && $(SAN_ENV) \
	  ctest --output-on-failure -R '^(unit|numerics|compile-report|launcher|emulator|fuzz-spec|fuzz-launcher)$$'

# The fuzzers for longer (FUZZ_SECONDS each), growing the corpora in
# $(BUILD)-san/fuzz; crashes are written there as crash-* files.
fuzz: deps $(BUILD)-san/build.ninja
	cmake --build $(BUILD)-san -j $(JOBS) --target mla-fuzz-spec mla-fuzz-launcher
	cd $(BUILD)-san && $(SAN_ENV) MLA_FUZZ_SECONDS=$(FUZZ_SECONDS) \
	  ctest --output-on-failure -R '^fuzz-' --timeout $$(( $(FUZZ_SECONDS) * 2 + 300 ))

clean:
	rm -rf $(BUILD)
