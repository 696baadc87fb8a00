int32_t tvmgen_demo_run(struct tvmgen_demo_inputs* inputs, struct tvmgen_demo_outputs* outputs, struct tvmgen_demo_devices* devices) {
  int32_t status = TVMD_OK;
  tvmgen_demo_failed = TVMGEN_DEMO_CALL_NONE;
  if (!tvmgen_demo_opened) return tvmgen_demo_fail_run(TVMGEN_DEMO_CALL_INVALID, TVMD_ERR_INVALID_STATE, devices);
  if (inputs == NULL || outputs == NULL || devices == NULL) return tvmgen_demo_fail_run(TVMGEN_DEMO_CALL_INVALID, TVMD_ERR_INVALID_ARGUMENT, devices);
  uint8_t* const pool = tvmgen_demo_host_pool;
  if (inputs->t0 == NULL) return tvmgen_demo_fail_run(TVMGEN_DEMO_CALL_INVALID, TVMD_ERR_INVALID_ARGUMENT, devices);
  memcpy((pool + 2048), inputs->t0, TVMGEN_DEMO_T0_SIZE);
  if (outputs->t14 == NULL) return tvmgen_demo_fail_run(TVMGEN_DEMO_CALL_INVALID, TVMD_ERR_INVALID_ARGUMENT, devices);
  { /* #0 CONV_2D on c */
    void* const buffers[] = {
        (void*)(pool + 2048),
        (void*)tvmgen_demo_constant_1,
        (void*)tvmgen_demo_constant_2,
        (void*)(pool + 0)};
    TVMD_FW_MARK(0);
    status = tvmd_c_conv2d_s8(&tvmgen_demo_op0_params, buffers, NULL);
    TVMD_FW_MARK(1);
    if (status != TVMD_OK) return tvmgen_demo_fail_run(TVMGEN_DEMO_CALL_OP0_CONV_2D, status, devices);
  }
  { /* #1 DEPTHWISE_CONV_2D on c */
    void* const buffers[] = {
        (void*)(pool + 0),
        (void*)tvmgen_demo_constant_4,
        (void*)tvmgen_demo_constant_5,
        (void*)(pool + 2048)};
    TVMD_FW_MARK(2);
    status = tvmd_c_depthwise_conv2d_s8(&tvmgen_demo_op1_params, buffers, NULL);
    TVMD_FW_MARK(3);
    if (status != TVMD_OK) return tvmgen_demo_fail_run(TVMGEN_DEMO_CALL_OP1_DEPTHWISE_CONV_2D, status, devices);
  }
  { /* #2 ADD on c */
    void* const buffers[] = {
        (void*)(pool + 0),
        (void*)(pool + 2048),
        (void*)(pool + 4096)};
    TVMD_FW_MARK(4);
    status = tvmd_c_add_s8(&tvmgen_demo_op2_params, buffers, NULL);
    TVMD_FW_MARK(5);
    if (status != TVMD_OK) return tvmgen_demo_fail_run(TVMGEN_DEMO_CALL_OP2_ADD, status, devices);
  }
  { /* #3 AVERAGE_POOL_2D on c */
    void* const buffers[] = {
        (void*)(pool + 4096),
        (void*)(pool + 0)};
    TVMD_FW_MARK(6);
    status = tvmd_c_avg_pool2d_s8(&tvmgen_demo_op3_params, buffers, NULL);
    TVMD_FW_MARK(7);
    if (status != TVMD_OK) return tvmgen_demo_fail_run(TVMGEN_DEMO_CALL_OP3_AVERAGE_POOL_2D, status, devices);
  }
  { /* #5 FULLY_CONNECTED on c */
    void* const buffers[] = {
        (void*)(pool + 0),
        (void*)tvmgen_demo_constant_11,
        (void*)tvmgen_demo_constant_12,
        (void*)(pool + 512)};
    TVMD_FW_MARK(8);
    status = tvmd_c_fully_connected_s8(&tvmgen_demo_op5_params, buffers, NULL);
    TVMD_FW_MARK(9);
    if (status != TVMD_OK) return tvmgen_demo_fail_run(TVMGEN_DEMO_CALL_OP5_FULLY_CONNECTED, status, devices);
  }
  { /* #6 SOFTMAX on c */
    void* const buffers[] = {
        (void*)(pool + 512),
        (void*)(pool + 0)};
    TVMD_FW_MARK(10);
    status = tvmd_c_softmax_s8(&tvmgen_demo_op6_params, buffers, NULL);
    TVMD_FW_MARK(11);
    if (status != TVMD_OK) return tvmgen_demo_fail_run(TVMGEN_DEMO_CALL_OP6_SOFTMAX, status, devices);
  }
  status = tvmgen_demo_deactivate(TVMD_OK, devices);
  if (status != TVMD_OK) return status;
  memcpy(outputs->t14, (pool + 0), TVMGEN_DEMO_T14_SIZE);
  return TVMD_OK;
}
