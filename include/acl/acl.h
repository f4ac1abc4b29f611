/* acl.h: the AscendCL model-execution interface of the Nano, on the host (nanobench issue 6).
 *
 * The names, types, enum values and error codes are the vendor's (acl_base.h, acl_mdl.h,
 * acl_rt.h; ../shared/docs/facts/compile.md): an app written against this header runs a
 * NAME.exeom from `nanobench atc` on nanobench's simulated NPU (engine/runtime_sim), whose
 * arithmetic is the chip's (share/doc/npu-numerics.md), and builds unchanged for the board.
 *
 * Flow, as on the chip: aclInit -> aclrtSetDevice -> aclrtCreateContext -> aclrtCreateStream
 * -> aclmdlLoadFromFile / aclmdlLoadFromMem -> datasets -> aclmdlExecute -> aclmdlUnload ->
 * destroy stream and context -> aclrtResetDevice -> aclFinalize. Load, execute and unload of
 * one model happen in the context that loaded it (ACL_ERROR_INVALID_PARAM otherwise).
 *
 * Data crosses the boundary in the model's input and output tensors' types and layouts
 * (aclmdlGetInputDataType / Format / Dims / SizeByIndex): fp16 ND for the float inputs and
 * outputs that atc writes (--input_fp16_nodes, --output_type=FP16). aclFloatToFloat16 and
 * aclFloat16ToFloat convert.
 *
 * Driver log: "[NDRV]" lines on stderr at or above the level set by uapi_npu_dlog_setlevel
 * (0 debug, 1 info, 2 warning, 3 error (default), 4 none) or by the environment variable
 * NANOBENCH_NDRV_LOG. aclGetRecentErrMsg gives the last error's text.
 *
 * Not thread-safe: one thread drives the runtime, as the Nano's single NPU task queue.
 */
#ifndef ACL_ACL_H
#define ACL_ACL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int aclError;
typedef uint16_t aclFloat16;
typedef void *aclrtContext;
typedef void *aclrtStream;
typedef struct aclDataBuffer aclDataBuffer;
typedef struct aclmdlDataset aclmdlDataset;
typedef struct aclmdlDesc aclmdlDesc;
typedef struct aclmdlExecConfigHandle aclmdlExecConfigHandle;

/* ---- error codes (acl_base.h; ge_error_codes.h for the 145xxx) ---- */
#define ACL_SUCCESS 0
#define ACL_ERROR_NONE 0
#define ACL_ERROR_INVALID_PARAM 100000
#define ACL_ERROR_UNINITIALIZE 100001
#define ACL_ERROR_REPEAT_INITIALIZE 100002
#define ACL_ERROR_INVALID_FILE 100003
#define ACL_ERROR_WRITE_FILE 100004
#define ACL_ERROR_INVALID_FILE_SIZE 100005
#define ACL_ERROR_PARSE_FILE 100006
#define ACL_ERROR_FILE_MISSING_ATTR 100007
#define ACL_ERROR_FILE_ATTR_INVALID 100008
#define ACL_ERROR_INVALID_DUMP_CONFIG 100009
#define ACL_ERROR_INVALID_PROFILING_CONFIG 100010
#define ACL_ERROR_INVALID_MODEL_ID 100011
#define ACL_ERROR_DESERIALIZE_MODEL 100012
#define ACL_ERROR_PARSE_MODEL 100013
#define ACL_ERROR_READ_MODEL_FAILURE 100014
#define ACL_ERROR_MODEL_SIZE_INVALID 100015
#define ACL_ERROR_MODEL_MISSING_ATTR 100016
#define ACL_ERROR_MODEL_INPUT_NOT_MATCH 100017
#define ACL_ERROR_MODEL_OUTPUT_NOT_MATCH 100018
#define ACL_ERROR_MODEL_NOT_DYNAMIC 100019
#define ACL_ERROR_OP_TYPE_NOT_MATCH 100020
#define ACL_ERROR_UNSUPPORTED_DATA_TYPE 100026
#define ACL_ERROR_FORMAT_NOT_MATCH 100027
#define ACL_ERROR_KERNEL_NOT_FOUND 100029
#define ACL_ERROR_REPEAT_FINALIZE 100037
#define ACL_ERROR_DUMP_ALREADY_RUN 100044
#define ACL_ERROR_DUMP_NOT_RUN 100045
#define ACL_ERROR_BAD_ALLOC 200000
#define ACL_ERROR_API_NOT_SUPPORT 200001
#define ACL_ERROR_INVALID_DEVICE 200002
#define ACL_ERROR_MEMORY_ADDRESS_UNALIGNED 200003
#define ACL_ERROR_RESOURCE_NOT_MATCH 200004
#define ACL_ERROR_INVALID_RESOURCE_HANDLE 200005
#define ACL_ERROR_FEATURE_UNSUPPORTED 200006
#define ACL_ERROR_STORAGE_OVER_LIMIT 300000
#define ACL_ERROR_INTERNAL_ERROR 500000
#define ACL_ERROR_FAILURE 500001
#define ACL_ERROR_GE_FAILURE 500002
#define ACL_ERROR_RT_FAILURE 500003
#define ACL_ERROR_DRV_FAILURE 500004
#define ACL_ERROR_GE_PARAM_INVALID 145000
#define ACL_ERROR_GE_EXEC_NOT_INIT 145001
#define ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID 145002
#define ACL_ERROR_GE_EXEC_MODEL_ID_INVALID 145003
#define ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID 145006
#define ACL_ERROR_GE_EXEC_MODEL_ADDR_INVALID 145007
#define ACL_ERROR_GE_EXEC_LOAD_MODEL_REPEATED 145009

/* ---- data types and formats (acl_base.h) ---- */
typedef enum aclDataType {
    ACL_DT_UNDEFINED = -1,
    ACL_FLOAT = 0,
    ACL_FLOAT16 = 1,
    ACL_INT8 = 2,
    ACL_INT32 = 3,
    ACL_UINT8 = 4,
    ACL_INT16 = 6,
    ACL_UINT16 = 7,
    ACL_UINT32 = 8,
    ACL_INT64 = 9,
    ACL_UINT64 = 10,
    ACL_DOUBLE = 11,
    ACL_BOOL = 12,
    ACL_STRING = 13,
    ACL_BF16 = 27,
    ACL_INT4 = 29
} aclDataType;

typedef enum aclFormat {
    ACL_FORMAT_UNDEFINED = -1,
    ACL_FORMAT_NCHW = 0,
    ACL_FORMAT_NHWC = 1,
    ACL_FORMAT_ND = 2,
    ACL_FORMAT_NC1HWC0 = 3,
    ACL_FORMAT_FRACTAL_Z = 4,
    ACL_FORMAT_FRACTAL_NZ = 29
} aclFormat;

typedef enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEM_MALLOC_HUGE_ONLY,
    ACL_MEM_MALLOC_NORMAL_ONLY
} aclrtMemMallocPolicy;

typedef enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_DEVICE_TO_DEVICE
} aclrtMemcpyKind;

#define ACL_MAX_DIM_CNT 128
#define ACL_MAX_TENSOR_NAME_LEN 128

typedef struct aclmdlIODims {
    char name[ACL_MAX_TENSOR_NAME_LEN]; /* the ONNX name, from NAME.dbg ("" without it) */
    size_t dimCount;
    int64_t dims[ACL_MAX_DIM_CNT];
} aclmdlIODims;

/* Partition sizes of an exeom, in bytes (aclmdlQueryExeOMDesc). nanobench's exeom
 * (share/doc/exeom.md): weight = the weight section; modelDesc = the header and the tensor
 * descriptors; kernel = 0 (the kernels are the NPU's own, not in the file); kernelArgs = 32
 * parameter bytes per task; staticTask = the task descriptors without their parameters;
 * dynamicTask, fifoTask = 0 (not produced yet). */
typedef struct aclmdlExeOMDesc {
    size_t weightSize;
    size_t modelDescSize;
    size_t kernelSize;
    size_t kernelArgsSize;
    size_t staticTaskSize;
    size_t dynamicTaskSize;
    size_t fifoTaskSize;
    size_t reserved[8];
} aclmdlExeOMDesc;

/* ---- runtime ---- */

/* Initializes the runtime. configPath: NULL, "" or a JSON file, whose optional "dump"
 * section is the seed's dump config ({"dump": {"dump_list": [{"model_name": NAME, "layer":
 * [...]}], "dump_path": DIR, "dump_mode": "output"|"input"|"all", "dump_op_switch":
 * "on"|"off", "dump_data": "tensor"|"stats"}}; applies to models loaded afterwards).
 * Errors: ACL_ERROR_REPEAT_INITIALIZE, ACL_ERROR_INVALID_FILE (unreadable file),
 * ACL_ERROR_PARSE_FILE (not JSON), ACL_ERROR_INVALID_DUMP_CONFIG (a bad dump section). */
aclError aclInit(const char *configPath);
/* Releases everything still held (models, datasets stay the caller's). Errors:
 * ACL_ERROR_REPEAT_FINALIZE / ACL_ERROR_UNINITIALIZE. */
aclError aclFinalize(void);
/* The text of the last error of this runtime ("" when none). */
const char *aclGetRecentErrMsg(void);

/* Device 0 is the one NPU. Errors: ACL_ERROR_UNINITIALIZE, ACL_ERROR_INVALID_DEVICE. */
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
/* A context on the device (which must be set); it becomes the current one. Errors:
 * ACL_ERROR_INVALID_PARAM (NULL), ACL_ERROR_INVALID_DEVICE, ACL_ERROR_BAD_ALLOC. */
aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId);
aclError aclrtDestroyContext(aclrtContext context);
aclError aclrtSetCurrentContext(aclrtContext context);
aclError aclrtGetCurrentContext(aclrtContext *context);
/* One stream per context (the seed: one stream per context), in the current context.
 * Errors: ACL_ERROR_INVALID_PARAM, ACL_ERROR_INVALID_RESOURCE_HANDLE (no context). */
aclError aclrtCreateStream(aclrtStream *stream);
aclError aclrtDestroyStream(aclrtStream stream);
/* Execution is synchronous: returns at once for a valid stream. */
aclError aclrtSynchronizeStream(aclrtStream stream);
/* Device memory is host memory here (the Nano shares SRAM); 32-byte aligned. Errors:
 * ACL_ERROR_INVALID_PARAM (NULL pointer, size 0), ACL_ERROR_BAD_ALLOC. */
aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void *devPtr);
aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                     aclrtMemcpyKind kind);

/* ---- models ---- */

/* Work (activation arena) and weight bytes of an exeom file. Errors:
 * ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID (cannot open), ACL_ERROR_INVALID_FILE (not an exeom:
 * magic, size), ACL_ERROR_PARSE_MODEL (an exeom with a bad section or descriptor). */
aclError aclmdlQuerySize(const char *fileName, size_t *workSize, size_t *weightSize);
/* The exeom's partition sizes (aclmdlExeOMDesc). Errors as aclmdlQuerySize. */
aclError aclmdlQueryExeOMDesc(const char *fileName, aclmdlExeOMDesc *desc);
/* Loads and checks an exeom (every check of share/doc/exeom.md, then every task's operands
 * against its kernel) in the current context; *modelId names it. NAME.dbg is looked for in
 * the dump path, then next to the file, for the layer names of dumps and aclmdlIODims.
 * Errors: ACL_ERROR_UNINITIALIZE, ACL_ERROR_INVALID_PARAM, ACL_ERROR_INVALID_RESOURCE_HANDLE
 * (no context), ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID (cannot open), ACL_ERROR_INVALID_FILE
 * (not an exeom: magic, size), ACL_ERROR_PARSE_MODEL (a bad section, CRC, descriptor or
 * task), ACL_ERROR_BAD_ALLOC. */
aclError aclmdlLoadFromFile(const char *modelPath, uint32_t *modelId);
/* The same from memory (copied). Errors as above, and ACL_ERROR_MODEL_SIZE_INVALID for a
 * size of 0 or one smaller than the header. */
aclError aclmdlLoadFromMem(const void *model, size_t modelSize, uint32_t *modelId);
/* Errors: ACL_ERROR_INVALID_MODEL_ID, ACL_ERROR_INVALID_PARAM (another context). */
aclError aclmdlUnload(uint32_t modelId);

aclmdlDesc *aclmdlCreateDesc(void);
aclError aclmdlDestroyDesc(aclmdlDesc *modelDesc);
/* Fills modelDesc with model modelId's inputs and outputs. Errors: ACL_ERROR_INVALID_PARAM,
 * ACL_ERROR_INVALID_MODEL_ID. */
aclError aclmdlGetDesc(aclmdlDesc *modelDesc, uint32_t modelId);
size_t aclmdlGetNumInputs(aclmdlDesc *modelDesc);
size_t aclmdlGetNumOutputs(aclmdlDesc *modelDesc);
/* Bytes of input/output index in its type and format; 0 for a bad index or NULL. */
size_t aclmdlGetInputSizeByIndex(aclmdlDesc *modelDesc, size_t index);
size_t aclmdlGetOutputSizeByIndex(aclmdlDesc *modelDesc, size_t index);
/* Errors: ACL_ERROR_INVALID_PARAM (NULL, bad index). */
aclError aclmdlGetInputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims);
aclError aclmdlGetOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims);
aclDataType aclmdlGetInputDataType(const aclmdlDesc *modelDesc, size_t index);
aclDataType aclmdlGetOutputDataType(const aclmdlDesc *modelDesc, size_t index);
aclFormat aclmdlGetInputFormat(const aclmdlDesc *modelDesc, size_t index);
aclFormat aclmdlGetOutputFormat(const aclmdlDesc *modelDesc, size_t index);
/* The ONNX names from NAME.dbg, or "" (NULL for a bad index). */
const char *aclmdlGetInputNameByIndex(const aclmdlDesc *modelDesc, size_t index);
const char *aclmdlGetOutputNameByIndex(const aclmdlDesc *modelDesc, size_t index);

aclmdlDataset *aclmdlCreateDataset(void);
/* Frees the dataset, not its buffers. */
aclError aclmdlDestroyDataset(const aclmdlDataset *dataset);
aclError aclmdlAddDatasetBuffer(aclmdlDataset *dataset, aclDataBuffer *dataBuffer);
size_t aclmdlGetDatasetNumBuffers(const aclmdlDataset *dataset);
aclDataBuffer *aclmdlGetDatasetBuffer(const aclmdlDataset *dataset, size_t index);

/* A view of size bytes at data (not copied, not freed). data NULL and size 0 for an output:
 * the runtime allocates it at execution (free with aclrtFree, then aclUpdateDataBuffer). */
aclDataBuffer *aclCreateDataBuffer(void *data, size_t size);
aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer);
aclError aclUpdateDataBuffer(aclDataBuffer *dataBuffer, void *data, size_t size);
void *aclGetDataBufferAddr(const aclDataBuffer *dataBuffer);
size_t aclGetDataBufferSizeV2(const aclDataBuffer *dataBuffer);

/* Runs model modelId on input (one buffer per model input, each of its input size) into
 * output (one per output; a buffer of size 0 and data NULL is allocated here). Synchronous.
 * Dumps the tasks the dump config selects. Errors: ACL_ERROR_UNINITIALIZE,
 * ACL_ERROR_INVALID_MODEL_ID, ACL_ERROR_INVALID_PARAM (NULL, another context),
 * ACL_ERROR_MODEL_INPUT_NOT_MATCH / ACL_ERROR_MODEL_OUTPUT_NOT_MATCH (buffer count or size),
 * ACL_ERROR_BAD_ALLOC, ACL_ERROR_WRITE_FILE (a dump file). */
aclError aclmdlExecute(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output);
/* The Nano's form: on stream (NULL: the context's), with an optional execution config
 * handle (NULL; none of its options change the simulator). Errors as aclmdlExecute, and
 * ACL_ERROR_INVALID_RESOURCE_HANDLE for a stream of another context. */
aclError aclmdlExecuteV2(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output,
                         aclrtStream stream, const aclmdlExecConfigHandle *handle);

/* ---- dump (also through aclInit's config) ---- */
aclError aclmdlInitDump(void);
/* Reads the dump section of a JSON file; applies to models loaded afterwards. Errors:
 * ACL_ERROR_INVALID_FILE, ACL_ERROR_PARSE_FILE, ACL_ERROR_INVALID_DUMP_CONFIG. */
aclError aclmdlSetDump(const char *dumpCfgPath);
aclError aclmdlFinalizeDump(void);

/* ---- half precision (IEEE binary16, round to nearest even) ---- */
aclFloat16 aclFloatToFloat16(float value);
float aclFloat16ToFloat(aclFloat16 value);
size_t aclDataTypeSize(aclDataType dataType);

/* The Nano driver's log level (seed: uapi_npu_dlog_setlevel(0x10, 3, 0) keeps errors only;
 * level 4 silences it). module and reserved are accepted and ignored. */
void uapi_npu_dlog_setlevel(uint32_t module, uint32_t level, uint32_t reserved);

#ifdef __cplusplus
}
#endif
#endif
