// llama-server built without llama.cpp's multimodal library (tools/mtmd: image and audio encoders, dozens of
// model files): scripts/build-llama-server.sh compiles this in its place. The server asks for a multimodal
// context only when started with --mmproj; here that fails with one clear line, and a server without one never
// reaches the functions that need a context, a chunk or a bitmap (they end the process, naming themselves).
// Compiled against llama.cpp's own mtmd.h and mtmd-helper.h, so every signature is checked against the source.
#include <cstdio>
#include <cstdlib>

#include "mtmd-helper.h"
#include "mtmd.h"

namespace {

[[noreturn]] void unreachable(const char* function) {
    std::fprintf(stderr, "llama-server: %s called, but this server is built without multimodal support\n", function);
    std::abort();
}

}  // namespace

// What a server without --mmproj calls at start-up: defaults, the log hook, the capability check.
mtmd_context_params mtmd_context_params_default(void) { return mtmd_context_params{}; }
mtmd_helper_init_opt mtmd_helper_init_opt_default(void) { return mtmd_helper_init_opt{}; }
void mtmd_helper_log_set(ggml_log_callback, void*) {}
mtmd_caps mtmd_get_cap_from_file(const char*) { return mtmd_caps{false, false}; }
std::map<ggml_backend_dev_t, size_t> mtmd_get_memory_usage(const char*, mtmd_context_params) { return {}; }
bool mtmd_support_vision(const mtmd_context*) { return false; }
bool mtmd_support_audio(const mtmd_context*) { return false; }
bool mtmd_helper_support_video(const mtmd_context*) { return false; }

mtmd_context* mtmd_init_from_file(const char* mmproj_fname, const llama_model*, const mtmd_context_params) {
    std::fprintf(stderr, "llama-server: cannot load %s: this server is built without multimodal support (tools/mtmd)\n",
                 mmproj_fname);
    return nullptr;
}

// Freeing nothing is allowed; there is never anything else to free.
void mtmd_free(mtmd_context* ctx) {
    if (ctx) unreachable(__func__);
}
void mtmd_bitmap_free(mtmd_bitmap* bitmap) {
    if (bitmap) unreachable(__func__);
}
void mtmd_batch_free(mtmd_batch* batch) {
    if (batch) unreachable(__func__);
}
void mtmd_input_chunk_free(mtmd_input_chunk* chunk) {
    if (chunk) unreachable(__func__);
}
void mtmd_input_chunks_free(mtmd_input_chunks* chunks) {
    if (chunks) unreachable(__func__);
}
void mtmd_helper_video_free(mtmd_helper_video* video) {
    if (video) unreachable(__func__);
}

// Reached only with a multimodal context, which this build never makes.
mtmd_batch* mtmd_batch_init(mtmd_context*) { unreachable(__func__); }
int32_t mtmd_batch_add_chunk(mtmd_batch*, const mtmd_input_chunk*) { unreachable(__func__); }
int32_t mtmd_batch_encode(mtmd_batch*) { unreachable(__func__); }
float* mtmd_batch_get_output_embd(mtmd_batch*, const mtmd_input_chunk*) { unreachable(__func__); }
mtmd_helper_bitmap_wrapper mtmd_helper_bitmap_init_from_buf(const mtmd_context*, const unsigned char*, size_t, bool,
                                                            mtmd_helper_init_opt) {
    unreachable(__func__);
}
int32_t mtmd_helper_decode_image_chunk(mtmd_context*, llama_context*, const mtmd_input_chunk*, float*, llama_pos,
                                       llama_seq_id, int32_t, llama_pos*, mtmd_helper_post_decode_callback, void*) {
    unreachable(__func__);
}
mtmd_input_chunks* mtmd_input_chunks_init(void) { unreachable(__func__); }
size_t mtmd_input_chunks_size(const mtmd_input_chunks*) { unreachable(__func__); }
const mtmd_input_chunk* mtmd_input_chunks_get(const mtmd_input_chunks*, size_t) { unreachable(__func__); }
int32_t mtmd_tokenize(const mtmd_context*, mtmd_input_chunks*, const mtmd_input_text*, const mtmd_bitmap* const*,
                      size_t) {
    unreachable(__func__);
}
mtmd_input_chunk* mtmd_input_chunk_copy(const mtmd_input_chunk*) { unreachable(__func__); }
mtmd_input_chunk* mtmd_input_chunk_get_placeholder(const mtmd_input_chunk*) { unreachable(__func__); }
mtmd_input_chunk* mtmd_input_chunk_load(const char*, size_t) { unreachable(__func__); }
int32_t mtmd_input_chunk_save(const mtmd_input_chunk*, char*, size_t, size_t*) { unreachable(__func__); }
const char* mtmd_input_chunk_get_id(const mtmd_input_chunk*) { unreachable(__func__); }
size_t mtmd_input_chunk_get_n_tokens(const mtmd_input_chunk*) { unreachable(__func__); }
llama_pos mtmd_input_chunk_get_n_pos(const mtmd_input_chunk*) { unreachable(__func__); }
mtmd_input_chunk_type mtmd_input_chunk_get_type(const mtmd_input_chunk*) { unreachable(__func__); }
const llama_token* mtmd_input_chunk_get_tokens_text(const mtmd_input_chunk*, size_t*) { unreachable(__func__); }
